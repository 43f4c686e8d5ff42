//! http_backend
