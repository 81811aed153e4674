package io.sluice.cli;

import picocli.CommandLine.Option;

/** The broker address every client command takes. */
final class ClientOptions {
    @Option(names = "--bootstrap", paramLabel = "HOST:PORT", defaultValue = SluiceCli.DEFAULT_BOOTSTRAP,
            description = "broker binary port (default: ${DEFAULT-VALUE}); token from SLUICE_AUTH_TOKEN, TLS CA from SLUICE_TLS_CA")
    String bootstrap;

    io.sluice.net.client.ClientConfig clientConfig(String clientId) throws UsageException {
        return SluiceCli.clientConfig(bootstrap, clientId);
    }
}
