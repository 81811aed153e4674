package io.sluice.cli;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** {@code sluice produce}: each stdin line becomes one event; exits once every line is acknowledged. */
@Command(name = "produce", mixinStandardHelpOptions = true,
        description = {"Send each stdin line (UTF-8, without the line end) as one event.",
                "Exits 0 once every line was acknowledged, 1 if any was not (the count is printed on stderr)."})
final class ProduceCommand extends SubCommand {
    private final InputStream stdin;

    @Mixin
    ClientOptions client;
    @Option(names = "--topic", required = true, paramLabel = "T", description = "topic to send to")
    String topic;
    @Option(names = "--acks", paramLabel = "MODE", defaultValue = "journal",
            description = "durability before acknowledging: memory, journal or sync (default: ${DEFAULT-VALUE})")
    String acksName;
    @Option(names = "--key-separator", paramLabel = "S", description = "split each line at the first S into key and value")
    String keySeparator;

    ProduceCommand(PrintStream out, PrintStream err) {
        this(System.in, out, err);
    }

    ProduceCommand(InputStream stdin, PrintStream out, PrintStream err) {
        super(out, err);
        this.stdin = stdin;
    }

    /** A command reading {@code stdin} that is given its output streams when run (tests). */
    ProduceCommand(InputStream stdin) {
        this(stdin, System.out, System.err);
    }

    /** Runs {@code sluice produce argv} reading this command's stdin and writing to {@code out} and {@code err}. */
    int run(String[] argv, PrintStream out, PrintStream err) throws UsageException {
        return new ProduceCommand(stdin, out, err).runAlone(argv);
    }

    @Override
    int execute() throws UsageException {
        Acks acks;
        try {
            acks = Acks.parse(acksName);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        String separator = keySeparator;
        AtomicLong sent = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        RemoteProducerConfig config = RemoteProducerConfig.builder(client.clientConfig("sluice-produce"))
                .producer(ProducerConfig.builder().acks(acks).build())
                .build();
        try (RemoteProducer producer = new RemoteProducer(config);
             BufferedReader in = new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                String key = null;
                String value = line;
                if (separator != null) {
                    int at = line.indexOf(separator);
                    if (at >= 0) {
                        key = line.substring(0, at);
                        value = line.substring(at + separator.length());
                    }
                }
                sent.incrementAndGet();
                producer.send(ProducerRecord.of(topic, key, value), (partition, offset, error) -> {
                    if (error == null) {
                        acked.incrementAndGet();
                    } else {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, error);
                    }
                });
                if (firstError.get() != null) {
                    break;
                }
            }
            producer.flush();
        } catch (IOException e) {
            err.println("sluice produce: reading stdin failed: " + e.getMessage());
            return SluiceCli.FAILED;
        } catch (SluiceException e) {
            err.println("sluice produce: " + e.getMessage());
            return SluiceCli.FAILED;
        }
        if (firstError.get() != null || acked.get() != sent.get()) {
            err.println("sluice produce: " + acked.get() + " of " + sent.get() + " events acknowledged; first error: "
                    + (firstError.get() == null ? "none" : firstError.get().getMessage()));
            return SluiceCli.FAILED;
        }
        err.println("sluice produce: " + acked.get() + " events acknowledged");
        return SluiceCli.OK;
    }
}
