package io.sluice.cli;

import java.io.PrintStream;
import java.util.Arrays;

/**
 * {@code bin/sluice}: the broker and its tools in one command.
 * <pre>
 * sluice broker        run a broker (binary protocol + HTTP)
 * sluice topics        create | list | describe | delete | alter topics
 * sluice groups        list | describe | reset-offsets consumer groups
 * sluice produce       send stdin lines as events
 * sluice consume       print events, one payload per line
 * sluice perf-produce  measure produce throughput and latency
 * sluice perf-consume  measure consume throughput
 * sluice ingest        run the ClickHouse / Redis ingest pipeline (from ingest-pipeline)
 * </pre>
 * Exit codes: 0 success, 1 the operation failed (for example events not acknowledged), 2 bad usage.
 */
public final class SluiceCli {
    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;

    private static final String USAGE_TEXT = """
            usage: sluice <command> [flags]   (sluice <command> --help for its flags)
                   any command also takes --log-level LEVEL (error|warn|info|debug|trace) and
                   --log-format text|json (JSON lines on stderr, Logback's JsonEncoder)

            commands:
              broker        run a broker: binary protocol (default 127.0.0.1:7070) and HTTP (default :8080)
              topics        create | list | describe | delete | alter (retention) topics
              groups        list | describe (offsets, lag) | reset-offsets consumer groups
              produce       send each stdin line as an event; exits once every line is acknowledged
              consume       print event payloads, one per line
              perf-produce  produce load; prints throughput, latency percentiles and a final JSON line
              perf-consume  consume load; prints throughput, latency percentiles and a final JSON line
              ingest        run the ingest pipeline (ClickHouse / Redis sinks)
            """;

    private SluiceCli() {
    }

    public static void main(String[] args) {
        // Sluice never sends usage data: set before any Chronicle class loads (bin/sluice also passes them).
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
        // Netty re-checks the reference count on every ByteBuf access (about 13% of a fetch's CPU in a profile);
        // Sluice's buffers have one owner each, so the broker and tools skip that check. Bounds checks stay on.
        if (System.getProperty("io.netty.buffer.checkAccessible") == null) {
            System.setProperty("io.netty.buffer.checkAccessible", "false");
        }
        String[] rest;
        try {
            rest = LogOptions.apply(args);
        } catch (UsageException e) {
            System.err.println("sluice: " + e.getMessage());
            System.exit(USAGE);
            return;
        }
        int code = run(rest, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    /** Runs a command; returns the exit code. The broker command returns only after shutdown. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            (args.length == 0 ? err : out).print(USAGE_TEXT);
            return args.length == 0 ? USAGE : OK;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (args[0].equals("ingest")) {
            return IngestCommand.run(rest);
        }
        if (args[0].equals("groups")) {
            return GroupsCommand.run(rest, out, err);
        }
        if (args[0].equals("topics") && rest.length > 0 && (rest[0].equals("delete") || rest[0].equals("alter"))) {
            return TopicsAdminCommand.run(rest[0], java.util.Arrays.copyOfRange(rest, 1, rest.length), out, err);
        }
        Command command = switch (args[0]) {
            case "broker" -> new BrokerCommand();
            case "topics" -> new TopicsCommand();
            case "produce" -> new ProduceCommand();
            case "consume" -> new ConsumeCommand();
            case "perf-produce" -> new PerfProduceCommand();
            case "perf-consume" -> new PerfConsumeCommand();
            default -> {
                err.println("sluice: unknown command '" + args[0] + "'");
                err.print(USAGE_TEXT);
                yield null;
            }
        };
        if (command == null) {
            return USAGE;
        }
        try {
            return command.run(rest, out, err);
        } catch (UsageException e) {
            err.println("sluice " + args[0] + ": " + e.getMessage());
            err.print(command.usage());
            return USAGE;
        }
    }

    static final String DEFAULT_BOOTSTRAP = "127.0.0.1:7070";

    static final String TLS_CA_ENV = "SLUICE_TLS_CA";

    /**
     * Client settings from {@code --bootstrap} (default 127.0.0.1:7070), the SLUICE_AUTH_TOKEN environment variable
     * (shared token) and SLUICE_TLS_CA (PEM CA file: connect with TLS trusting it).
     */
    static io.sluice.net.client.ClientConfig clientConfig(Args args, String clientId) throws UsageException {
        return clientConfig(args.get("bootstrap", DEFAULT_BOOTSTRAP), clientId);
    }

    static io.sluice.net.client.ClientConfig clientConfig(String bootstrap, String clientId) throws UsageException {
        String token = System.getenv(BrokerCommand.AUTH_TOKEN_ENV);
        String ca = System.getenv(TLS_CA_ENV);
        try {
            io.netty.handler.ssl.SslContext tls = ca == null || ca.isBlank() ? null
                    : io.sluice.net.security.TlsConfig.forClient(java.nio.file.Path.of(ca.strip())).newClientContext();
            return io.sluice.net.client.ClientConfig.builder(bootstrap)
                    .clientId(clientId)
                    .authToken(token == null || token.isBlank() ? null : token.strip())
                    .sslContext(tls)
                    .build();
        } catch (io.sluice.core.SluiceException | IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** One subcommand. */
    interface Command {
        int run(String[] args, PrintStream out, PrintStream err) throws UsageException;

        String usage();
    }
}
