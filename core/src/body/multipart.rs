//! `multipart/form-data`: files kept byte for byte with their filename and content type.

use crate::params::{RawPairs, RawValue};
use crate::problem::Problem;
use crate::value::UploadedFile;
use bytes::Bytes;
use http::StatusCode;
use std::borrow::Cow;

/// What one multipart body may hold beyond its total size (the body limit): without these, a
/// 2 MiB body could carry tens of thousands of parts, each a map entry and an allocation, or a
/// file name of a megabyte. Past any of them: 400, as Starlette answers too many parts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_parts: usize,
    pub max_part_header_bytes: usize,
    pub max_filename_bytes: usize,
}

pub async fn parse(content_type: &str, body: Bytes, max_file_size: Option<usize>, limits: Limits) -> Result<RawPairs<'static>, Problem> {
    let boundary = multer::parse_boundary(content_type).map_err(|_| malformed("the content type has no boundary"))?;
    let stream = futures_util::stream::once(async move { Ok::<Bytes, std::convert::Infallible>(body) });
    // The whole body is already in memory (within the body limit), so `max_file_size` is checked
    // on each file as read; a per-field multer limit would also cap plain text fields.
    let mut multipart = multer::Multipart::new(stream, boundary);
    let mut pairs = RawPairs::new();
    let mut parts = 0;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return Err(malformed(&error.to_string())),
        };
        parts += 1;
        if parts > limits.max_parts {
            return Err(refused(format!("The body has more than {} parts.", limits.max_parts)));
        }
        let header_bytes: usize = field.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
        if header_bytes > limits.max_part_header_bytes {
            return Err(refused(format!("Part {parts} has {header_bytes} bytes of headers; the limit is {}.", limits.max_part_header_bytes)));
        }
        if let Some(filename) = field.file_name().filter(|f| f.len() > limits.max_filename_bytes) {
            return Err(refused(format!(
                "Part {parts} has a file name of {} bytes; the limit is {}.",
                filename.len(),
                limits.max_filename_bytes
            )));
        }
        let name = field.name().unwrap_or_default().to_owned();
        let filename = field.file_name().map(base_name);
        let content_type = field.content_type().map(|m| m.to_string());
        let headers: Vec<(String, String)> =
            field.headers().iter().map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned())).collect();
        let data = field.bytes().await.map_err(|e| malformed(&e.to_string()))?;
        let value = match filename {
            // What a browser sends for a file input left empty: no file was chosen, and a
            // handler must not be given an empty one named "" (Starlette's and Rack's rule).
            Some(filename) if filename.is_empty() && data.is_empty() => continue,
            Some(filename) => {
                if let Some(max) = max_file_size.filter(|max| data.len() > *max) {
                    return Err(Problem::status(StatusCode::PAYLOAD_TOO_LARGE)
                        .with_detail(format!("File `{name}` exceeds the limit of {max} bytes.")));
                }
                RawValue::File(Box::new(UploadedFile { field: name.clone(), filename: Some(filename), content_type, headers, data }))
            }
            None => match String::from_utf8(data.to_vec()) {
                Ok(text) => RawValue::Text(Cow::Owned(text)),
                Err(e) => RawValue::Invalid(e.into_bytes()),
            },
        };
        pairs.push(Cow::Owned(name), value);
    }
    Ok(pairs)
}

/// A part's file name without the directories a client put in it (`../../etc/passwd` →
/// `passwd`, `C:\x\y.txt` → `y.txt`), and `""` for `.` or `..`: a handler that saves an
/// upload under its name writes below its own folder, as @fastify/multipart (busboy) and
/// Rack give the name. Found by a probe: Node and Ruby handlers got `../../etc/passwd`.
fn base_name(sent: &str) -> String {
    let name = sent.rsplit(['/', '\\']).next().unwrap_or_default();
    if name == "." || name == ".." {
        String::new()
    } else {
        name.to_owned()
    }
}

fn refused(detail: String) -> Problem {
    Problem::status(StatusCode::BAD_REQUEST).with_detail(detail)
}

fn malformed(reason: &str) -> Problem {
    Problem::status(StatusCode::BAD_REQUEST).with_detail(format!("Malformed multipart body: {reason}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(parts: &[(&str, Option<&str>, &str)]) -> Bytes {
        let mut out = String::new();
        for (name, filename, data) in parts {
            out.push_str("--b\r\nContent-Disposition: form-data; name=\"");
            out.push_str(name);
            out.push('"');
            if let Some(filename) = filename {
                out.push_str(&format!("; filename=\"{filename}\""));
            }
            out.push_str("\r\n\r\n");
            out.push_str(data);
            out.push_str("\r\n");
        }
        out.push_str("--b--\r\n");
        Bytes::from(out)
    }

    #[tokio::test]
    async fn max_file_size_limits_files_not_text_fields() {
        let long_text = "t".repeat(100);
        let ok = parse("multipart/form-data; boundary=b", body(&[("note", None, &long_text), ("f", Some("a.txt"), "12345678")]), Some(8), LIMITS).await;
        assert_eq!(ok.unwrap().iter().count(), 2);
        let too_big = parse("multipart/form-data; boundary=b", body(&[("f", Some("a.txt"), "123456789")]), Some(8), LIMITS).await;
        let problem = too_big.unwrap_err();
        assert_eq!(problem.status, 413);
        assert_eq!(problem.detail.as_deref(), Some("File `f` exceeds the limit of 8 bytes."));
    }

    const LIMITS: Limits = Limits { max_parts: 3, max_part_header_bytes: 200, max_filename_bytes: 10 };

    async fn detail(parts: &[(&str, Option<&str>, &str)]) -> Option<String> {
        parse("multipart/form-data; boundary=b", body(parts), None, LIMITS).await.err().map(|p| p.detail.unwrap_or_default())
    }

    /// The file name of each part kept, `None` for a text field.
    async fn filenames(parts: &[(&str, Option<&str>, &str)]) -> Vec<Option<String>> {
        let limits = Limits { max_parts: 10, max_part_header_bytes: 200, max_filename_bytes: 100 };
        let pairs = parse("multipart/form-data; boundary=b", body(parts), None, limits).await.unwrap();
        pairs.iter().map(|(_, value)| if let RawValue::File(file) = value { file.filename.clone() } else { None }).collect()
    }

    #[tokio::test]
    async fn a_file_name_is_given_without_its_directories() {
        let sent = ["../../a.txt", "C:\\x\\b.txt", "..\\c.txt", "d/..", "./e", "f.txt"];
        let parts: Vec<(&str, Option<&str>, &str)> = sent.iter().map(|name| ("f", Some(*name), "x")).collect();
        let kept: Vec<Option<String>> = ["a.txt", "b.txt", "c.txt", "", "e", "f.txt"].iter().map(|name| Some(name.to_string())).collect();
        assert_eq!(filenames(&parts).await, kept);
    }

    #[tokio::test]
    async fn a_file_input_left_empty_is_no_file() {
        // A browser's part for a file input with nothing chosen: `filename=""`, no bytes.
        assert_eq!(filenames(&[("f", Some(""), ""), ("note", None, "hi")]).await, [None], "only the text field is left");
        assert_eq!(filenames(&[("f", Some(""), "data")]).await, [Some(String::new())], "bytes without a name are still a file");
        assert_eq!(filenames(&[("f", Some("a.txt"), "")]).await, [Some("a.txt".to_owned())], "an empty file with a name is a file");
    }

    #[tokio::test]
    async fn parts_part_headers_and_file_names_are_bounded() {
        assert_eq!(detail(&[("a", None, "1"), ("b", None, "2"), ("c", None, "3")]).await, None);
        assert_eq!(detail(&[("a", None, "1"), ("b", None, "2"), ("c", None, "3"), ("d", None, "4")]).await.unwrap(), "The body has more than 3 parts.");
        assert_eq!(detail(&[("f", Some("0123456789"), "x")]).await, None);
        assert_eq!(detail(&[("f", Some("0123456789a"), "x")]).await.unwrap(), "Part 1 has a file name of 11 bytes; the limit is 10.");
        let long_name = "n".repeat(200);
        assert!(detail(&[(&long_name, None, "x")]).await.unwrap().starts_with("Part 1 has 2"), "a long header block is refused");
    }
}
