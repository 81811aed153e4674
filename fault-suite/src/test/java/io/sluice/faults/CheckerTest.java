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
    private static void kafkaSend(History h, long id, boolean ok, int partition, long offset) {
        h.append("kafka-producer", "kafka-send", ok ? "ok" : "fail", n -> n.put("id", id).put("partition", partition).put("offset", offset));
    }

    private static void kafkaAssign(History h, String member, int gen, int... partitions) {
        h.append("kafka-member-0", "kafka-assign", "ok", n -> {
            n.put("gen", gen).put("member", member);
            for (int p : partitions) {
                n.withArray("partitions").add(p);
            }
        });
    }

    private static KafkaWorkload.ReadBack topic(Object... idsAndPositions) {
        java.util.Map<Long, List<String>> positions = new java.util.HashMap<>();
        long records = 0;
        for (int i = 0; i < idsAndPositions.length; i += 2) {
            positions.computeIfAbsent(((Number) idsAndPositions[i]).longValue(), k -> new java.util.ArrayList<>())
                    .add((String) idsAndPositions[i + 1]);
            records++;
        }
        return new KafkaWorkload.ReadBack(positions, records, true);
    }

    @Test
    void kafkaRecordsAcknowledgedWhereTheyAreReadBackOnceAndAGroupWithOneOwnerPerGenerationPass() {
        Checker.Facts f = facts(h -> {
            kafkaSend(h, 0, true, 0, 0);
            kafkaSend(h, 1, true, 1, 0);
            kafkaSend(h, 2, false, 0, -1);
            kafkaAssign(h, "a-1", 1, 0, 1);
            kafkaAssign(h, "a-1", 2, 0);
            kafkaAssign(h, "b-1", 2, 1);
        });
        Report r = Checker.report(1, f, List.of(), 0, topic(0L, "0@0", 1L, "1@0", 2L, "0@1"));
        assertThat(r.violations()).isEmpty();
        assertThat(r.kafka().acked()).isEqualTo(2);
        assertThat(r.kafka().ambiguous()).as("failed on the client, stored anyway: allowed once").isEqualTo(1);
        assertThat(r.kafka().generations()).isEqualTo(2);
        assertThat(r.format()).contains("kafka        records acknowledged 2");
    }

    @Test
    void anAcknowledgedKafkaRecordMissingFromTheTopicIsLost() {
        Checker.Facts f = facts(h -> {
            kafkaSend(h, 0, true, 0, 0);
            kafkaSend(h, 1, true, 0, 1);
        });
        Report r = Checker.report(1, f, List.of(), 0, topic(0L, "0@0"));
        assertThat(r.violations()).singleElement().asString().isEqualTo("kafka: 1 acknowledged records lost (e.g. ids [1])");
    }

    @Test
    void aKafkaRecordStoredTwiceIsADuplicateEvenIfItsSendFailedOnTheClient() {
        Checker.Facts f = facts(h -> {
            kafkaSend(h, 0, true, 0, 0);
            kafkaSend(h, 1, false, 0, -1);
        });
        Report r = Checker.report(1, f, List.of(), 0, topic(0L, "0@0", 1L, "0@1", 1L, "0@2"));
        assertThat(r.violations()).singleElement().asString().startsWith("kafka: 1 records stored twice").contains("[1]");
    }

    @Test
    void aKafkaRecordReadBackElsewhereThanItsAcknowledgedOffsetIsMisplaced() {
        Checker.Facts f = facts(h -> kafkaSend(h, 0, true, 0, 5));
        Report r = Checker.report(1, f, List.of(), 0, topic(0L, "0@6"));
        assertThat(r.violations()).singleElement().asString().contains("id 0 acknowledged at 0@5, read at [0@6]");
    }

    @Test
    void twoKafkaMembersOwningOnePartitionInOneGenerationAreFound() {
        Checker.Facts f = facts(h -> {
            kafkaAssign(h, "a-1", 3, 0, 1);
            kafkaAssign(h, "b-1", 4, 0, 1); // the zombie's successor in the next generation: fine
            h.append("kafka-member-1", "kafka-read", "ok", n -> n.put("gen", 4).put("member", "c-1").put("partition", 1)
                    .put("first", 0).put("last", 9)); // a read of partition 1 by another member in generation 4: not fine
        });
        Report r = Checker.report(1, f, List.of(), 0, topic());
        assertThat(r.kafka().twoOwners()).singleElement().asString().isEqualTo("generation 4, partition 1 owned by [b-1, c-1]");
        assertThat(r.passed()).isFalse();
    }

    @Test
    void aTopicNotReadBackToItsEndFailsTheRun() {
        Checker.Facts f = facts(h -> kafkaSend(h, 0, true, 0, 0));
        Report r = Checker.report(1, f, List.of(), 0,
                new KafkaWorkload.ReadBack(java.util.Map.of(0L, List.of("0@0")), 1, false));
        assertThat(r.violations()).singleElement().asString().contains("could not be read back");
    }
}
