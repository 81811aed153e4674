package io.sluice.faults;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the operator of a ClickHouse 18.16 replica does after the faults, while the suite settles: a part that an INSERT
 * left behind unregistered in ZooKeeper (the server answered 319) and that stays so for {@link #GRACE} is moved aside
 * with {@code DETACH TABLE} / {@code ATTACH TABLE} (18.16 drops it at attach; its own part check would too, but it
 * does not run by itself: {@code docs/RELIABILITY.md}, "The price is liveness, not safety").
 *
 * <p>The pipeline never counts such a part as landed: it waits, with a warning naming the part, and sends the batch
 * again once the part is gone. Without this step a run whose last 319 came after its last ZooKeeper fault could wait
 * past its settle deadline and report those rows as not landed: a liveness wait, not a loss. Every action is printed, so
 * a run's log shows when the operator acted.
 */
final class ReplicaOperator {
    /** How long a part must stay unregistered before the table is detached and attached (a commit in flight takes ms). */
    static final Duration GRACE = Duration.ofSeconds(30);
    private static final long LOOK_EVERY_NANOS = 5_000_000_000L;

    private final long graceNanos;
    private final Map<String, Long> firstSeenNanos = new HashMap<>();
    private final List<String> actions = new ArrayList<>();
    private long nextLookNanos = System.nanoTime();

    ReplicaOperator() {
        this(GRACE);
    }

    /** With another grace (a test's). */
    ReplicaOperator(Duration grace) {
        this.graceNanos = grace.toNanos();
    }

    /** Looks at most every 5 s; detaches and attaches a replicated table whose replica kept a part unregistered for the grace. */
    void tend(List<Cluster.Table> tables, PrintStream out) {
        long now = System.nanoTime();
        if (now - nextLookNanos < 0) {
            return;
        }
        nextLookNanos = now + LOOK_EVERY_NANOS;
        for (Cluster.Table t : tables) {
            try {
                tend(t, now, out);
            } catch (RuntimeException e) {
                out.println("[torture] operator: could not look at the parts of " + t.name() + ": " + e.getMessage());
            }
        }
    }

    /** What the operator did, one line per action. */
    List<String> actions() {
        return List.copyOf(actions);
    }

    private void tend(Cluster.Table t, long now, PrintStream out) {
        String[] dbTable = t.name().split("\\.", 2);
        List<String> replica = t.server().queryLines("SELECT zookeeper_path, replica_name FROM system.replicas WHERE database = '"
                + dbTable[0] + "' AND table = '" + dbTable[1] + "'");
        if (replica.isEmpty()) {
            return; // not a replicated table
        }
        String[] zk = replica.get(0).split("\t");
        Set<String> unregistered = new HashSet<>(t.server().queryLines("SELECT name FROM system.parts WHERE database = '"
                + dbTable[0] + "' AND table = '" + dbTable[1] + "' AND active"));
        if (unregistered.isEmpty()) {
            return;
        }
        unregistered.removeAll(t.server().queryLines("SELECT name FROM system.zookeeper WHERE path = '" + zk[0] + "/replicas/"
                + zk[1] + "/parts'"));
        String prefix = t.name() + "/";
        firstSeenNanos.keySet().removeIf(k -> k.startsWith(prefix) && !unregistered.contains(k.substring(prefix.length())));
        List<String> overdue = new ArrayList<>();
        for (String part : unregistered) {
            long first = firstSeenNanos.computeIfAbsent(prefix + part, k -> now);
            if (now - first >= graceNanos) {
                overdue.add(part);
            }
        }
        if (overdue.isEmpty()) {
            return;
        }
        String action = "replica of " + t.name() + " kept part(s) " + overdue + " unregistered in ZooKeeper for "
                + graceNanos / 1_000_000_000L + " s (an INSERT answered 319): DETACH TABLE / ATTACH TABLE";
        out.println("[torture] operator: " + action);
        actions.add(action);
        t.server().execute("DETACH TABLE " + t.name());
        for (int attempt = 1; ; attempt++) {
            try {
                t.server().execute("ATTACH TABLE " + t.name());
                break;
            } catch (RuntimeException e) {
                if (attempt == 5) {
                    throw e;
                }
                out.println("[torture] operator: ATTACH TABLE " + t.name() + " failed (" + e.getMessage() + "), again");
            }
        }
        firstSeenNanos.keySet().removeIf(k -> k.startsWith(prefix));
    }
}
