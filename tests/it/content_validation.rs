//! content_validation
