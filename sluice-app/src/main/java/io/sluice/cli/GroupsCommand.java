package io.sluice.cli;

import io.sluice.core.GroupStatus;
import io.sluice.core.OffsetResetPlan;
import io.sluice.core.OffsetResetSpec;
import io.sluice.core.SluiceException;
import io.sluice.net.client.RemoteAdmin;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * {@code sluice groups list | describe | reset-offsets}: Kafka's {@code kafka-consumer-groups.sh} for Sluice, over the
 * binary protocol's admin APIs. A reset is a dry run unless {@code --execute}, and the broker refuses to execute it
 * while the group has live members.
 */
@Command(name = "groups", mixinStandardHelpOptions = true,
        description = "List consumer groups, show their committed offsets and lag, move their offsets.",
        subcommands = {GroupsCommand.ListGroups.class, GroupsCommand.Describe.class, GroupsCommand.ResetOffsets.class},
        exitCodeOnExecutionException = SluiceCli.FAILED)
final class GroupsCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list, describe or reset-offsets");
    }

    /** The connection options every subcommand shares. */
    static final class Connection {
        @Option(names = "--bootstrap", paramLabel = "HOST:PORT", defaultValue = SluiceCli.DEFAULT_BOOTSTRAP,
                description = "broker binary port (default ${DEFAULT-VALUE}); token from SLUICE_AUTH_TOKEN, CA from SLUICE_TLS_CA")
        String bootstrap;

        RemoteAdmin open(String clientId) {
            try {
                return new RemoteAdmin(SluiceCli.clientConfig(bootstrap, clientId));
            } catch (UsageException e) {
                throw new SluiceException(SluiceException.Code.INVALID_CONFIG, e.getMessage());
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Groups with live members or committed offsets.")
    static final class ListGroups implements Callable<Integer> {
        @CommandLine.Mixin
        Connection connection = new Connection();
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            try (RemoteAdmin admin = connection.open("sluice-groups")) {
                admin.listGroups().forEach(spec.commandLine().getOut()::println);
            }
            return SluiceCli.OK;
        }
    }

    @Command(name = "describe", mixinStandardHelpOptions = true,
            description = "Members, committed offset, end offset and lag per partition.")
    static final class Describe implements Callable<Integer> {
        @CommandLine.Mixin
        Connection connection = new Connection();
        @Option(names = "--group", required = true, paramLabel = "G")
        String group;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            try (RemoteAdmin admin = connection.open("sluice-groups")) {
                print(admin.describeGroup(group), spec.commandLine().getOut());
            }
            return SluiceCli.OK;
        }

        static void print(GroupStatus s, PrintWriter out) {
            out.printf("group %s  topic %s  state %s  generation %d  members %d  lag %d%n", s.groupId(),
                    s.topic() == null ? "-" : s.topic(), s.state(), s.generation(), s.members().size(), s.totalLag());
            boolean topics = s.topic() == null && !s.partitions().isEmpty(); // a Kafka group reading several topics
            out.printf((topics ? "%-20s " : "%s") + "%-10s %15s %15s %15s %10s  %s%n", topics ? "TOPIC" : "", "PARTITION",
                    "CURRENT-OFFSET", "START-OFFSET", "END-OFFSET", "LAG", "MEMBER");
            for (GroupStatus.PartitionLag p : s.partitions()) {
                out.printf((topics ? "%-20s " : "%s") + "%-10d %15s %15d %15d %10d  %s%n", topics ? p.topic() : "", p.partition(),
                        p.committed() < 0 ? "-" : Long.toString(p.committed()), p.startOffset(), p.endOffset(), p.lag(),
                        p.member() == null ? "-" : p.member());
            }
        }
    }

    @Command(name = "reset-offsets", mixinStandardHelpOptions = true,
            description = {"Moves a group's committed offsets on every partition of a topic.",
                    "A dry run unless --execute; refused while the group has live members (stop its consumers first)."})
    static final class ResetOffsets implements Callable<Integer> {
        @CommandLine.Mixin
        Connection connection = new Connection();
        @Option(names = "--group", required = true, paramLabel = "G")
        String group;
        @Option(names = "--topic", required = true, paramLabel = "T")
        String topic;
        @ArgGroup(exclusive = true, multiplicity = "1")
        Target target;
        @Option(names = "--execute", description = "apply the plan (without it, only print it)")
        boolean execute;
        @Spec
        CommandLine.Model.CommandSpec spec;

        static final class Target {
            @Option(names = "--to-earliest", required = true, description = "the first retained offset")
            boolean earliest;
            @Option(names = "--to-latest", required = true, description = "the end: skip everything not consumed")
            boolean latest;
            @Option(names = "--to-offset", required = true, paramLabel = "N", description = "an explicit offset (clamped to the retained range)")
            Long offset;
            @Option(names = "--to-datetime", required = true, paramLabel = "ISO-8601",
                    description = "the first event at or after this time, e.g. 2026-11-23T18:00:00Z")
            String datetime;
            @Option(names = "--shift-by", required = true, paramLabel = "N", description = "committed offset plus N (negative: back)")
            Long shift;

            OffsetResetSpec spec() {
                if (earliest) {
                    return OffsetResetSpec.toEarliest();
                }
                if (latest) {
                    return OffsetResetSpec.toLatest();
                }
                if (offset != null) {
                    return OffsetResetSpec.toOffset(offset);
                }
                if (datetime != null) {
                    return OffsetResetSpec.toDatetime(OffsetResetSpec.parseDatetime(datetime));
                }
                return OffsetResetSpec.shiftBy(shift);
            }
        }

        @Override
        public Integer call() {
            OffsetResetSpec resetSpec;
            try {
                resetSpec = target.spec();
            } catch (SluiceException.InvalidConfigException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            PrintWriter out = spec.commandLine().getOut();
            try (RemoteAdmin admin = connection.open("sluice-groups")) {
                OffsetResetPlan plan = admin.resetOffsets(group, topic, resetSpec, execute);
                out.printf("%-20s %-20s %-10s %15s %15s%n", "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET");
                for (OffsetResetPlan.Row r : plan.partitions()) {
                    out.printf("%-20s %-20s %-10d %15s %15d%n", group, topic, r.partition(),
                            r.committed() < 0 ? "-" : Long.toString(r.committed()), r.target());
                }
                out.println(plan.executed() ? "offsets reset for group " + group
                        : "dry run: nothing changed; add --execute to apply");
            }
            return SluiceCli.OK;
        }
    }

    /** Runs {@code sluice groups ...} with picocli; exit codes 0 ok, 1 failed, 2 bad usage. */
    static int run(String[] args, java.io.PrintStream out, java.io.PrintStream err) {
        return execute(new CommandLine(new GroupsCommand()), "groups", args, out, err);
    }

    /** Shared by the picocli commands: broker errors print one line (no stack trace) and exit 1. */
    static int execute(CommandLine cl, String name, String[] args, java.io.PrintStream out, java.io.PrintStream err) {
        PrintWriter o = new PrintWriter(out, true);
        PrintWriter e = new PrintWriter(err, true);
        cl.setOut(o).setErr(e).setExecutionExceptionHandler((ex, line, parsed) -> {
            String sub = parsed.subcommand() == null ? "" : " " + parsed.subcommand().commandSpec().name();
            line.getErr().println("sluice " + name + sub + ": " + (ex instanceof SluiceException ? ex.getMessage() : ex.toString()));
            return SluiceCli.FAILED;
        });
        int code = cl.execute(args);
        o.flush();
        e.flush();
        return code;
    }
}
