package io.sluice.faults;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The checker's properties on hand-written histories: each anomaly is found, and a clean history passes. */
class CheckerTest {
    @TempDir
    Path dir;

    private Checker.Facts facts(java.util.function.Consumer<History> ops) {
        Path file = dir.resolve("history-" + System.nanoTime() + ".jsonl");
        try (History h = new History(file)) {
            ops.accept(h);
        }
        return Checker.read(file);
    }

    private static void send(History h, long id, boolean ok) {
        h.append("producer-0", "send", ok ? "ok" : "fail", n -> n.put("id", id).put("partition", 0).put("offset", id));
    }

    private static void consume(History h, String member, int gen, int partition, long id) {
        h.append("member-0", "consume", "ok", n -> n.put("member", member).put("gen", gen).put("partition", partition)
                .put("offset", id).put("id", id));
    }

    private static void commit(History h, String member, int partition, long offset) {
        h.append("member-0", "commit", "ok", n -> n.put("member", member).put("gen", 1).with("offsets").put(Integer.toString(partition), offset));
    }

    @Test
    void aCleanHistoryWithExactTablesPasses() {
        Checker.Facts f = facts(h -> {
            for (long id = 0; id < 3; id++) {
                send(h, id, true);
                consume(h, "m1", 1, 0, id);
            }
            commit(h, "m1", 0, 3);
            h.append("nemesis", "fault", "start", n -> n.put("kind", "BROKER_KILL"));
        });
        Report r = Checker.report(1, f, List.of(new Report.TableResult("journal", "db.t", true, 3, 3, 0, 0, 0, List.of())), 1);
        assertThat(r.violations()).isEmpty();
        assertThat(r.acked()).isEqualTo(3);
        assertThat(r.faults()).containsEntry("BROKER_KILL", 1);
    }

    @Test
    void anAcknowledgedEventNoMemberConsumedIsLost() {
        Checker.Facts f = facts(h -> {
            send(h, 0, true);
            send(h, 1, true);
            send(h, 2, false);
            consume(h, "m1", 1, 0, 0);
        });
        Report r = Checker.report(1, f, List.of(), 1);
        assertThat(r.groupLost()).isEqualTo(1);
        assertThat(r.groupLostExamples()).containsExactly(1L);
        assertThat(r.failed()).isEqualTo(1);
        assertThat(r.violations()).singleElement().asString().contains("never consumed");
    }

    @Test
    void aCommitBelowAnEarlierAcknowledgedCommitOfThePartitionGoesBackwards() {
        Checker.Facts f = facts(h -> {
            commit(h, "m1", 0, 10);
            commit(h, "m2", 1, 5);
            commit(h, "m2", 0, 7);
        });
        Report r = Checker.report(1, f, List.of(), 1);
        assertThat(r.backwardCommits()).singleElement().asString().contains("partition 0: 10 -> 7");
        assertThat(r.passed()).isFalse();
    }

    @Test
    void twoMembersProcessingOnePartitionInOneGenerationAreFoundButNotAcrossGenerations() {
        Checker.Facts f = facts(h -> {
            consume(h, "m1", 1, 0, 0);
            consume(h, "m2", 2, 0, 0); // the new owner in the next generation: fine
            consume(h, "m3", 2, 0, 1); // a second owner in generation 2: not fine
        });
        Report r = Checker.report(1, f, List.of(), 0);
        assertThat(r.generationsKnown()).isTrue();
        assertThat(r.twoOwnersInOneGeneration()).singleElement().asString().contains("generation 2, partition 0");
    }

    @Test
    void generationsAreComparedAcrossBrokerRestarts() {
        // the coordinator stores each generation before handing it out, so a restarted broker never repeats one:
        // the same generation and partition in two members is a fencing failure, whatever restarted in between
        Checker.Facts f = facts(h -> {
            consume(h, "m1", 1, 0, 0);
            h.append("nemesis", "fault", "end", n -> n.put("kind", "BROKER_KILL").withArray("restarted").add("broker"));
            consume(h, "m2", 1, 0, 1);
        });
        assertThat(Checker.report(1, f, List.of(), 0).twoOwnersInOneGeneration()).singleElement().asString()
                .startsWith("generation 1, partition 0 processed by");
    }

    @Test
    void duplicatesBreakOnlyATableWhereExactlyOnceIsStated() {
        Checker.Facts f = facts(h -> send(h, 0, true));
        Report r = Checker.report(1, f, List.of(
                new Report.TableResult("coalescing", "db.a", false, 2, 1, 0, 1, 0, List.of()),
                new Report.TableResult("journal", "db.b", true, 2, 1, 0, 1, 0, List.of())), 0);
        assertThat(r.violations()).singleElement().asString().startsWith("journal: 1 duplicated rows");
        assertThat(r.format()).contains("coalescing").contains("duplicated 1");
    }
}
