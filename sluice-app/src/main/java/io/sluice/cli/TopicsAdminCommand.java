package io.sluice.cli;

import io.sluice.core.TopicDescription;
import io.sluice.net.client.RemoteAdmin;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code sluice topics delete} and {@code sluice topics alter} (retention), over the binary protocol's admin APIs. */
final class TopicsAdminCommand {
    private TopicsAdminCommand() {
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Deletes a topic, its journal files and the groups' offsets on it.")
    static final class Delete implements Callable<Integer> {
        @CommandLine.Mixin
        GroupsCommand.Connection connection = new GroupsCommand.Connection();
        @Option(names = "--topic", required = true, paramLabel = "T")
        String topic;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            try (RemoteAdmin admin = connection.open("sluice-topics")) {
                admin.deleteTopic(topic);
            }
            spec.commandLine().getOut().println("deleted topic " + topic);
            return SluiceCli.OK;
        }
    }

    @Command(name = "alter", mixinStandardHelpOptions = true,
            description = "Changes a topic's retention (applied from the next retention run; -1 means unlimited).")
    static final class Alter implements Callable<Integer> {
        @CommandLine.Mixin
        GroupsCommand.Connection connection = new GroupsCommand.Connection();
        @Option(names = "--topic", required = true, paramLabel = "T")
        String topic;
        @Option(names = "--retention-ms", paramLabel = "MS", description = "drop journal files whose events are all older")
        Long retentionMillis;
        @Option(names = "--retention-bytes", paramLabel = "B", description = "per partition, drop the oldest files above this size")
        Long retentionBytes;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            if (retentionMillis == null && retentionBytes == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "give --retention-ms and/or --retention-bytes");
            }
            try (RemoteAdmin admin = connection.open("sluice-topics")) {
                TopicDescription current = admin.describeTopic(topic);
                TopicDescription d = admin.alterTopic(topic,
                        retentionMillis != null ? retentionMillis : current.config().retentionMillis(),
                        retentionBytes != null ? retentionBytes : current.config().retentionBytes());
                spec.commandLine().getOut().printf("topic %s  retention.ms %d  retention.bytes %d%n", d.name(),
                        d.config().retentionMillis(), d.config().retentionBytes());
            }
            return SluiceCli.OK;
        }
    }

    static int run(String sub, String[] args, java.io.PrintStream out, java.io.PrintStream err) {
        Object command = sub.equals("delete") ? new Delete() : new Alter();
        return GroupsCommand.execute(new CommandLine(command), "topics", args, out, err);
    }
}
