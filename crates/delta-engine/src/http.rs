//! The one way the engine starts an HTTP client (model servers, OTLP receivers, MCP
//! servers over streamable HTTP): reqwest over rustls with the ring crypto provider.
//!
//! reqwest and rmcp are built without a provider of their own (one TLS stack, one crypto
//! library, and no C toolchain beyond ring's), so the provider is installed as the
//! process default before any client is built.

/// A client builder with the crypto provider in place.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}

/// Installs ring as the process's default rustls provider; a second call changes nothing.
pub fn install_crypto_provider() {
    // Err only when a provider is installed already, which is what is wanted.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
