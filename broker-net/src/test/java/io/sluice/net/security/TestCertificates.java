package io.sluice.net.security;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Test PKI made with the {@code openssl} command line: a CA and a server certificate for {@code localhost} and
 * {@code 127.0.0.1} signed by it, as PEM files with a PKCS#8 key. Each call makes a fresh, unrelated CA.
 */
public final class TestCertificates {
    public final Path caCertificate;
    public final Path serverCertificate;
    public final Path serverKey;

    private TestCertificates(Path caCertificate, Path serverCertificate, Path serverKey) {
        this.caCertificate = caCertificate;
        this.serverCertificate = serverCertificate;
        this.serverKey = serverKey;
    }

    public static boolean opensslAvailable() {
        try {
            return new ProcessBuilder("openssl", "version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public static TestCertificates create(Path dir, String caName) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path caKey = dir.resolve("ca.key");
        Path ca = dir.resolve("ca.pem");
        Path key = dir.resolve("server.key");
        Path csr = dir.resolve("server.csr");
        Path cert = dir.resolve("server.pem");
        Path ext = dir.resolve("server.ext");
        Files.writeString(ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                + "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n");
        run(dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", caKey.toString(), "-out", ca.toString(), "-days", "2", "-subj", "/CN=" + caName,
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        run(dir, "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key.toString(), "-out", csr.toString(), "-subj", "/CN=localhost");
        run(dir, "openssl", "x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(),
                "-CAcreateserial", "-out", cert.toString(), "-days", "2", "-extfile", ext.toString());
        return new TestCertificates(ca, cert, key);
    }

    /** A JDK SSLContext trusting only the CA in {@code caPem}. */
    public static SSLContext trusting(Path caPem) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            List<X509Certificate> certs = new ArrayList<>();
            CertificateFactory.getInstance("X.509").generateCertificates(in).forEach(c -> certs.add((X509Certificate) c));
            for (int i = 0; i < certs.size(); i++) {
                trust.setCertificateEntry("ca" + i, certs.get(i));
            }
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + new String(output, StandardCharsets.UTF_8));
        }
    }
}
