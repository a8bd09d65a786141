//! `multipart/form-data`: files kept byte for byte with their filename and content type.

use crate::params::{RawPairs, RawValue};
use crate::problem::Problem;
use crate::value::UploadedFile;
use bytes::Bytes;
use http::StatusCode;
use std::borrow::Cow;

pub async fn parse(content_type: &str, body: Bytes, max_file_size: Option<usize>) -> Result<RawPairs<'static>, Problem> {
    let boundary = multer::parse_boundary(content_type).map_err(|_| malformed("the content type has no boundary"))?;
    let stream = futures_util::stream::once(async move { Ok::<Bytes, std::convert::Infallible>(body) });
    // The whole body is already in memory (within the body limit), so `max_file_size` is checked
    // on each file as read; a per-field multer limit would also cap plain text fields.
    let mut multipart = multer::Multipart::new(stream, boundary);
    let mut pairs = RawPairs::new();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return Err(malformed(&error.to_string())),
        };
        let name = field.name().unwrap_or_default().to_owned();
        let filename = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(|m| m.to_string());
        let data = field.bytes().await.map_err(|e| malformed(&e.to_string()))?;
        let value = match filename {
            Some(filename) => {
                if let Some(max) = max_file_size.filter(|max| data.len() > *max) {
                    return Err(Problem::status(StatusCode::PAYLOAD_TOO_LARGE)
                        .with_detail(format!("File `{name}` exceeds the limit of {max} bytes.")));
                }
                RawValue::File(UploadedFile { field: name.clone(), filename: Some(filename), content_type, data })
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
        let ok = parse("multipart/form-data; boundary=b", body(&[("note", None, &long_text), ("f", Some("a.txt"), "12345678")]), Some(8)).await;
        assert_eq!(ok.unwrap().iter().count(), 2);
        let too_big = parse("multipart/form-data; boundary=b", body(&[("f", Some("a.txt"), "123456789")]), Some(8)).await;
        let problem = too_big.unwrap_err();
        assert_eq!(problem.status, 413);
        assert_eq!(problem.detail.as_deref(), Some("File `f` exceeds the limit of 8 bytes."));
    }
}
