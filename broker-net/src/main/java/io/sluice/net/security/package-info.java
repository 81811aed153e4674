/**
 * Security shared by Sluice's listeners (HTTP and binary): TLS contexts from PEM files ({@link
 * io.sluice.net.security.TlsConfig}), shared-token authentication with constant-time comparison ({@link
 * io.sluice.net.security.TokenAuthenticator}) and the warning for listeners exposed without authentication
 * ({@link io.sluice.net.security.BindCheck}). Secrets never appear in logs, metrics or {@code toString()}.
 */
package io.sluice.net.security;
