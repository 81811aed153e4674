package io.sluice.cli;

import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.net.client.RemoteAdmin;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;

/** {@code sluice topics create|list|describe|delete|alter}. */
@Command(name = "topics", mixinStandardHelpOptions = true, synopsisSubcommandLabel = "(create | list | describe | delete | alter)",
        description = "Create, list, describe, delete or alter (retention) topics on a running broker.")
final class TopicsCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    static CommandLine commandLine(PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(new TopicsCommand());
        cl.addSubcommand("create", new Create(out, err));
        cl.addSubcommand("list", new ListTopics(out, err));
        cl.addSubcommand("describe", new Describe(out, err));
        cl.addSubcommand("delete", new TopicsAdminCommand.Delete());
        cl.addSubcommand("alter", new TopicsAdminCommand.Alter());
        return cl;
    }

    /** No subcommand: a usage error. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: create, list, describe, delete or alter");
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a topic.")
    static final class Create extends SubCommand {
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true, paramLabel = "T", description = "topic name")
        String topic;
        @Option(names = "--partitions", paramLabel = "N", defaultValue = "1", description = "partitions, 1-" + TopicConfig.MAX_PARTITIONS + " (default: ${DEFAULT-VALUE})")
        int partitions;
        @Option(names = "--retention-ms", paramLabel = "MS", defaultValue = "-1", description = "delete roll-cycle files older than this (default: keep)")
        long retentionMs;
        @Option(names = "--retention-bytes", paramLabel = "B", defaultValue = "-1", description = "keep at most this many bytes per partition (default: keep)")
        long retentionBytes;
        @Option(names = "--if-not-exists", description = "succeed if the topic exists")
        boolean ifNotExists;

        Create(PrintStream out, PrintStream err) {
            super(out, err);
        }

        @Override
        int execute() throws UsageException {
            TopicConfig config;
            try {
                config = TopicConfig.builder(topic)
                        .partitions((int) check("--partitions", partitions, 1, TopicConfig.MAX_PARTITIONS))
                        .retentionMillis(check("--retention-ms", retentionMs, -1, Long.MAX_VALUE))
                        .retentionBytes(check("--retention-bytes", retentionBytes, -1, Long.MAX_VALUE))
                        .build();
            } catch (SluiceException e) {
                throw new UsageException(e.getMessage());
            }
            try (RemoteAdmin admin = new RemoteAdmin(client.clientConfig("sluice-topics"))) {
                TopicDescription d = ifNotExists ? admin.createTopicIfAbsent(config) : admin.createTopic(config);
                out.println("created topic " + d.name() + " with " + d.config().partitions() + " partition(s)");
                return SluiceCli.OK;
            } catch (SluiceException e) {
                err.println("sluice topics create: " + e.getMessage());
                return SluiceCli.FAILED;
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the topics, one per line.")
    static final class ListTopics extends SubCommand {
        @Mixin
        ClientOptions client;

        ListTopics(PrintStream out, PrintStream err) {
            super(out, err);
        }

        @Override
        int execute() throws UsageException {
            try (RemoteAdmin admin = new RemoteAdmin(client.clientConfig("sluice-topics"))) {
                admin.listTopics().forEach(out::println);
                return SluiceCli.OK;
            } catch (SluiceException e) {
                err.println("sluice topics list: " + e.getMessage());
                return SluiceCli.FAILED;
            }
        }
    }

    @Command(name = "describe", mixinStandardHelpOptions = true, description = "Show a topic's settings and each partition's offsets.")
    static final class Describe extends SubCommand {
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true, paramLabel = "T", description = "topic name")
        String topic;

        Describe(PrintStream out, PrintStream err) {
            super(out, err);
        }

        @Override
        int execute() throws UsageException {
            try (RemoteAdmin admin = new RemoteAdmin(client.clientConfig("sluice-topics"))) {
                print(admin.describeTopic(topic), out);
                return SluiceCli.OK;
            } catch (SluiceException e) {
                err.println("sluice topics describe: " + e.getMessage());
                return SluiceCli.FAILED;
            }
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
