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
    let mut limits = multer::SizeLimit::new();
    if let Some(max) = max_file_size {
        limits = limits.per_field(max as u64);
    }
    let mut multipart = multer::Multipart::with_constraints(stream, boundary, multer::Constraints::new().size_limit(limits));
    let mut pairs = RawPairs::new();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return Err(problem_for(error, max_file_size)),
        };
        let name = field.name().unwrap_or_default().to_owned();
        let filename = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(|m| m.to_string());
        let data = field.bytes().await.map_err(|e| problem_for(e, max_file_size))?;
        let value = match filename {
            Some(filename) => RawValue::File(UploadedFile { field: name.clone(), filename: Some(filename), content_type, data }),
            None => match String::from_utf8(data.to_vec()) {
                Ok(text) => RawValue::Text(Cow::Owned(text)),
                Err(e) => RawValue::Invalid(e.into_bytes()),
            },
        };
        pairs.push(Cow::Owned(name), value);
    }
    Ok(pairs)
}

fn problem_for(error: multer::Error, max_file_size: Option<usize>) -> Problem {
    match error {
        multer::Error::FieldSizeExceeded { field_name, .. } => Problem::status(StatusCode::PAYLOAD_TOO_LARGE).with_detail(format!(
            "Multipart field `{}` exceeds the limit of {} bytes.",
            field_name.unwrap_or_default(),
            max_file_size.unwrap_or_default()
        )),
        other => malformed(&other.to_string()),
    }
}

fn malformed(reason: &str) -> Problem {
    Problem::status(StatusCode::BAD_REQUEST).with_detail(format!("Malformed multipart body: {reason}."))
}
