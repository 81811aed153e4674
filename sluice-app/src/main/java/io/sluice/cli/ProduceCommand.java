package io.sluice.cli;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** {@code sluice produce}: each stdin line becomes one event; exits once every line is acknowledged. */
final class ProduceCommand implements SluiceCli.Command {
    private final InputStream stdin;

    ProduceCommand() {
        this(System.in);
    }

    ProduceCommand(InputStream stdin) {
        this.stdin = stdin;
    }

    @Override
    public String usage() {
        return """
                usage: sluice produce [--bootstrap HOST:PORT] --topic T [--acks memory|journal|sync] [--key-separator S]

                  one event per stdin line (UTF-8, without the line end); exits 0 once every line was acknowledged,
                  1 if any was not (the count is printed on stderr)
                  --acks           durability before acknowledging (default journal)
                  --key-separator  split each line at the first S into key and value
                """;
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws UsageException {
        Args args = Args.parse(argv, Args.set("bootstrap", "topic", "acks", "key-separator"), Args.set());
        if (args.has("help")) {
            out.print(usage());
            return SluiceCli.OK;
        }
        String topic = args.required("topic");
        Acks acks;
        try {
            acks = Acks.parse(args.get("acks", "journal"));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        String separator = args.get("key-separator", null);
        AtomicLong sent = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        RemoteProducerConfig config = RemoteProducerConfig.builder(SluiceCli.clientConfig(args, "sluice-produce"))
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
