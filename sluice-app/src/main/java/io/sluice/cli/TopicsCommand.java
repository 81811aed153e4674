package io.sluice.cli;

import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.net.client.RemoteAdmin;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Set;

/** {@code sluice topics create|list|describe}. */
final class TopicsCommand implements SluiceCli.Command {
    @Override
    public String usage() {
        return """
                usage: sluice topics create   [--bootstrap HOST:PORT] --topic T [--partitions N] [--retention-ms MS]
                                              [--retention-bytes B] [--if-not-exists]
                       sluice topics list     [--bootstrap HOST:PORT]
                       sluice topics describe [--bootstrap HOST:PORT] --topic T
                       sluice topics delete   [--bootstrap HOST:PORT] --topic T
                       sluice topics alter    [--bootstrap HOST:PORT] --topic T [--retention-ms MS] [--retention-bytes B]

                  --bootstrap HOST:PORT   broker binary port (default 127.0.0.1:7070)
                """;
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws UsageException {
        if (argv.length == 0) {
            throw new UsageException("missing subcommand: create, list or describe");
        }
        if (argv[0].equals("--help")) {
            out.print(usage());
            return SluiceCli.OK;
        }
        String sub = argv[0];
        String[] rest = Arrays.copyOfRange(argv, 1, argv.length);
        Args args = switch (sub) {
            case "create" -> Args.parse(rest, Args.set("bootstrap", "topic", "partitions", "retention-ms", "retention-bytes"),
                    Set.of("if-not-exists"));
            case "list" -> Args.parse(rest, Args.set("bootstrap"), Set.of());
            case "describe" -> Args.parse(rest, Args.set("bootstrap", "topic"), Set.of());
            default -> throw new UsageException("unknown subcommand '" + sub + "': use create, list or describe");
        };
        if (args.has("help")) {
            out.print(usage());
            return SluiceCli.OK;
        }
        TopicConfig config = null;
        if (sub.equals("create")) {
            try {
                config = TopicConfig.builder(args.required("topic"))
                        .partitions(args.getInt("partitions", 1, 1, TopicConfig.MAX_PARTITIONS))
                        .retentionMillis(args.getLong("retention-ms", -1, -1, Long.MAX_VALUE))
                        .retentionBytes(args.getLong("retention-bytes", -1, -1, Long.MAX_VALUE))
                        .build();
            } catch (SluiceException e) {
                throw new UsageException(e.getMessage());
            }
        }
        String topic = sub.equals("describe") ? args.required("topic") : null;
        try (RemoteAdmin admin = new RemoteAdmin(SluiceCli.clientConfig(args, "sluice-topics"))) {
            switch (sub) {
                case "create" -> {
                    TopicDescription d = args.has("if-not-exists") ? admin.createTopicIfAbsent(config) : admin.createTopic(config);
                    out.println("created topic " + d.name() + " with " + d.config().partitions() + " partition(s)");
                }
                case "list" -> admin.listTopics().forEach(out::println);
                default -> print(admin.describeTopic(topic), out);
            }
            return SluiceCli.OK;
        } catch (SluiceException e) {
            err.println("sluice topics " + sub + ": " + e.getMessage());
            return SluiceCli.FAILED;
        }
    }

    private static void print(TopicDescription d, PrintStream out) {
        out.printf("topic %s  partitions %d  retention.ms %d  retention.bytes %d  journaled %s%n", d.name(),
                d.config().partitions(), d.config().retentionMillis(), d.config().retentionBytes(), d.config().journaled());
        out.printf("%-10s %15s %15s %15s%n", "partition", "start", "end", "journal-bytes");
        for (TopicDescription.PartitionInfo p : d.partitions()) {
            out.printf("%-10d %15d %15d %15d%n", p.partition(), p.startOffset(), p.endOffset(), p.journalBytes());
        }
    }
}
