//! The Ruby classes the binding builds and recognises, held by the app and marked for the GC.

use magnus::{gc::Marker, value::Opaque, Error, Module, RClass, Ruby};

pub struct Types {
    request: Opaque<RClass>,
    uploaded_file: Opaque<RClass>,
    response: Opaque<RClass>,
    http_error: Opaque<RClass>,
    event_stream: Opaque<RClass>,
    date: Opaque<RClass>,
    time: Opaque<RClass>,
}

impl Types {
    /// `Ferrule::Request`, `Ferrule::UploadedFile`, `Ferrule::Response`, `Ferrule::HTTPError`
    /// (given), `Ferrule::EventStream` (defined in lib/ferrule), and
    /// Ruby's `Date` and `Time`.
    pub fn new(ruby: &Ruby, request: RClass, uploaded_file: RClass, response: RClass, http_error: RClass) -> Result<Types, Error> {
        ruby.require("date")?;
        let date: RClass = ruby.class_object().const_get("Date")?;
        let time: RClass = ruby.class_object().const_get("Time")?;
        let ferrule: magnus::RModule = ruby.class_object().const_get("Ferrule")?;
        let event_stream: RClass = ferrule.const_get("EventStream")?;
        Ok(Types {
            request: request.into(),
            uploaded_file: uploaded_file.into(),
            response: response.into(),
            http_error: http_error.into(),
            event_stream: event_stream.into(),
            date: date.into(),
            time: time.into(),
        })
    }

    pub fn request(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.request)
    }

    pub fn uploaded_file(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.uploaded_file)
    }

    pub fn response(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.response)
    }

    pub fn http_error(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.http_error)
    }

    pub fn event_stream(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.event_stream)
    }

    pub fn date(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.date)
    }

    pub fn time(&self, ruby: &Ruby) -> RClass {
        ruby.get_inner(self.time)
    }

    pub fn mark(&self, marker: &Marker) {
        for class in [self.request, self.uploaded_file, self.response, self.http_error, self.event_stream, self.date, self.time] {
            marker.mark(class);
        }
    }
}
