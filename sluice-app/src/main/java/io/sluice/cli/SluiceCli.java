package io.sluice.cli;

import io.sluice.core.SluiceException;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * {@code bin/sluice}: the broker and its tools in one command, parsed by picocli (generated help, the same errors
 * and exit codes everywhere, shell completion from {@code sluice generate-completion}).
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
@Command(name = "sluice", mixinStandardHelpOptions = true, versionProvider = SluiceCli.Version.class,
        synopsisHeading = "usage: ", synopsisSubcommandLabel = "<command>",
        description = "The Sluice broker and its tools. `sluice <command> --help` describes each command.",
        commandListHeading = "%ncommands:%n",
        footer = {"", "Every command also takes --log-level LEVEL (error|warn|info|debug|trace) and --log-format text|json",
                "(JSON lines on stderr, Logback's JsonEncoder).",
                "", "Exit codes: 0 success, 1 the operation failed, 2 bad usage."})
public final class SluiceCli implements Runnable {
    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;

    static final String DEFAULT_BOOTSTRAP = "127.0.0.1:7070";

    static final String TLS_CA_ENV = "SLUICE_TLS_CA";

    @CommandLine.Spec
    CommandSpec spec;

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

    /** No command given: the usage goes to stderr and the exit code is 2. */
    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command");
    }

    /** Runs a command; returns the exit code. The broker command returns only after shutdown. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return commandLine(out, err).execute(args);
    }

    /** The whole command tree writing to {@code out} and {@code err}. */
    static CommandLine commandLine(PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(new SluiceCli());
        cl.addSubcommand("broker", new BrokerCommand(out, err));
        cl.addSubcommand("topics", TopicsCommand.commandLine(out, err));
        cl.addSubcommand("groups", new GroupsCommand());
        cl.addSubcommand("produce", new ProduceCommand(out, err));
        cl.addSubcommand("consume", new ConsumeCommand(out, err));
        cl.addSubcommand("perf-produce", new PerfProduceCommand(out, err));
        cl.addSubcommand("perf-consume", new PerfConsumeCommand(out, err));
        cl.addSubcommand("ingest", new IngestCommand(out, err, io.sluice.ingest.ConsumerFactory::remote));
        CommandLine completion = new CommandLine(new AutoComplete.GenerateCompletion());
        completion.getCommandSpec().usageMessage().hidden(false);
        cl.addSubcommand("generate-completion", completion);
        configure(cl, out, err);
        return cl;
    }

    /** The conventions every Sluice command line shares (also {@code sluice-bench}'s). */
    static void configure(CommandLine cl, PrintStream out, PrintStream err) {
        cl.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cl.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setUsageHelpAutoWidth(true);
        cl.setExitCodeExceptionMapper(e -> e instanceof ParameterException ? USAGE : FAILED);
        cl.setParameterExceptionHandler((ex, argv) -> {
            CommandLine c = ex.getCommandLine();
            // picocli checks required options before unknown ones; an unknown flag is the more useful message
            ParameterException e = ex instanceof CommandLine.UnmatchedArgumentException || c.getUnmatchedArguments().isEmpty()
                    ? ex : new CommandLine.UnmatchedArgumentException(c, c.getUnmatchedArguments());
            c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + e.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(e, c.getErr());
            c.usage(c.getErr());
            c.getErr().flush();
            return USAGE;
        });
        cl.setExecutionExceptionHandler((e, c, parseResult) -> {
            c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + e.getMessage());
            c.getErr().flush();
            return FAILED;
        });
        setSynopsisHeading(cl);
    }

    private static void setSynopsisHeading(CommandLine cl) {
        cl.getCommandSpec().usageMessage().synopsisHeading("usage: ");
        for (CommandLine sub : cl.getSubcommands().values()) {
            setSynopsisHeading(sub);
        }
    }

    /**
     * Client settings from {@code --bootstrap} (default 127.0.0.1:7070), the SLUICE_AUTH_TOKEN environment variable
     * (shared token) and SLUICE_TLS_CA (PEM CA file: connect with TLS trusting it).
     */
    static io.sluice.net.client.ClientConfig clientConfig(String bootstrap, String clientId) throws UsageException {
        String token = System.getenv(BrokerSettings.AUTH_TOKEN_ENV);
        String ca = System.getenv(TLS_CA_ENV);
        try {
            io.netty.handler.ssl.SslContext tls = ca == null || ca.isBlank() ? null
                    : io.sluice.net.security.TlsConfig.forClient(java.nio.file.Path.of(ca.strip())).newClientContext();
            return io.sluice.net.client.ClientConfig.builder(bootstrap)
                    .clientId(clientId)
                    .authToken(token == null || token.isBlank() ? null : token.strip())
                    .sslContext(tls)
                    .build();
        } catch (SluiceException | IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** {@code --version}: the jar's implementation version. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SluiceCli.class.getPackage().getImplementationVersion();
            return new String[] {"sluice " + (v == null ? "(development build)" : v)};
        }
    }
}
