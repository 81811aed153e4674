package io.sluice.net.security;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.InvalidConfigException;

import javax.net.ssl.SSLException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS material in PEM files, turned into Netty {@link SslContext}s with the JDK provider (no native library).
 * Server side: a certificate chain and its PKCS#8 private key ({@code -----BEGIN PRIVATE KEY-----}, optionally
 * encrypted with {@code keyPassword}). Client side: the CA certificate(s) to trust; without one the JDK's
 * default trust store is used. Clients built here verify the server's certificate chain and host name. Servers do
 * not ask clients for certificates (clients authenticate with the shared token), so {@code trustedCa} is only
 * read by {@link #newClientContext()}.
 *
 * @param certificateChain PEM certificate chain of this endpoint (a client may present one), or null on a client
 * @param privateKey       PEM PKCS#8 key for {@code certificateChain}, or null with it
 * @param keyPassword      password of an encrypted key, or null; never printed
 * @param trustedCa        PEM CA certificate(s) a client trusts for the server, or null for the JDK defaults
 */
public record TlsConfig(Path certificateChain, Path privateKey, String keyPassword, Path trustedCa) {

    public TlsConfig {
        if ((certificateChain == null) != (privateKey == null)) {
            throw InvalidConfigException.of("tls certificate/key", certificateChain == null ? "key only" : "certificate only",
                    "must both be set or both be unset");
        }
        requireReadable("tls certificate", certificateChain);
        requireReadable("tls key", privateKey);
        requireReadable("tls trusted CA", trustedCa);
    }

    /** Server TLS from a certificate chain and its key. */
    public static TlsConfig forServer(Path certificateChain, Path privateKey) {
        return new TlsConfig(certificateChain, privateKey, null, null);
    }

    /** Client TLS trusting the CA certificate(s) in {@code trustedCa}. */
    public static TlsConfig forClient(Path trustedCa) {
        return new TlsConfig(null, null, null, trustedCa);
    }

    /** A server context; fails with {@link InvalidConfigException} when this config has no certificate. */
    public SslContext newServerContext() {
        if (certificateChain == null) {
            throw InvalidConfigException.of("tls certificate", null, "must be set for a server");
        }
        try {
            return SslContextBuilder.forServer(certificateChain.toFile(), privateKey.toFile(), keyPassword)
                    .sslProvider(SslProvider.JDK)
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new InvalidConfigException("cannot load TLS certificate " + certificateChain + " / key " + privateKey
                    + ": " + e.getMessage());
        }
    }

    /** A client context verifying the server against {@link #trustedCa()} (or the JDK defaults when null). */
    public SslContext newClientContext() {
        try {
            SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                    .endpointIdentificationAlgorithm("HTTPS");
            if (trustedCa != null) {
                builder.trustManager(trustedCa.toFile());
            }
            if (certificateChain != null) {
                builder.keyManager(certificateChain.toFile(), privateKey.toFile(), keyPassword);
            }
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new SluiceException.InvalidConfigException("cannot load TLS trust " + trustedCa + ": " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "TlsConfig[certificateChain=" + certificateChain + ", privateKey=" + privateKey
                + ", keyPassword=" + (keyPassword == null ? "none" : "<redacted>") + ", trustedCa=" + trustedCa + "]";
    }

    private static void requireReadable(String setting, Path file) {
        if (file != null && !Files.isReadable(file)) {
            throw InvalidConfigException.of(setting, file, "must be a readable PEM file");
        }
    }
}
