package io.sluice.faults;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.testkit.ClickHouseServer;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides a run from its history file and the final ClickHouse tables alone, per guarantee:
 * <ul>
 *   <li><b>acknowledged events lost</b>: an id whose send was acknowledged (acks=journal) and that is missing from a
 *   strategy's table, or that no group member ever consumed — must be 0 everywhere;</li>
 *   <li><b>rows duplicated</b>: rows beyond one per id in a table — must be 0 where the docs state exactly-once,
 *   counted and reported where they state at-least-once;</li>
 *   <li><b>committed offsets going backwards</b>: an acknowledged commit of a partition below an earlier
 *   acknowledged commit of it — must be 0;</li>
 *   <li><b>a partition processed by two members of one generation</b>: must be 0 (checkable once the client reports
 *   generations; records with generation -1 are not counted).</li>
 *   <li><b>Kafka clients</b> (when the run has them, {@link KafkaWorkload}): every record the idempotent
 *   {@code KafkaProducer} had acknowledged is in the topic read back after the run, exactly once and at the partition
 *   and offset it was acknowledged with; no record at all (acknowledged or not) is there twice; and no partition was
 *   owned (assigned or read) by two members of the Kafka group in one generation.</li>
 * </ul>
 * Ids are dense from 0, so sets of ids are bit sets.
 */
public final class Checker {
    private Checker() {
    }

    /** What the history says, before looking at any table. */
    static final class Facts {
        final BitSet acked = new BitSet();
        final BitSet failed = new BitSet();
        final BitSet consumed = new BitSet();
        final Map<String, Integer> faults = new TreeMap<>();
        final Map<Integer, Long> lastCommit = new HashMap<>();
        final List<String> backwards = new ArrayList<>();
        final Map<String, Set<String>> ownersByGenerationPartition = new HashMap<>();
        long consumes;
        long commitsOk;
        long commitsFailed;
        long consumerFailures;
        long healFailures;
        boolean generationsKnown;
        final BitSet kafkaAcked = new BitSet();
        final BitSet kafkaFailed = new BitSet();
        /** acknowledged id → "partition@offset" it was acknowledged with */
        final Map<Long, String> kafkaAckedAt = new HashMap<>();
        /** "generation G, partition P" → Kafka member ids that were assigned or read it in G */
        final Map<String, Set<String>> kafkaOwners = new TreeMap<>();
        final Set<Integer> kafkaGenerations = new HashSet<>();
        long kafkaAssignments;
        long kafkaReads;
        long kafkaCommitsOk;
        long kafkaCommitsFailed;
        long kafkaConsumerFailures;
        long kafkaProducerFailures;
    }

    static Facts read(Path historyFile) {
        return read(historyFile, Long.MAX_VALUE);
    }

    /** The facts of the first {@code maxLines} lines: a run's history read while it is still being written. */
    static Facts read(Path historyFile, long maxLines) {
        Facts f = new Facts();
        History.read(historyFile, maxLines, op -> {
            String fn = op.path("f").asText();
            String type = op.path("type").asText();
            switch (fn) {
                case "send" -> (type.equals("ok") ? f.acked : f.failed).set((int) op.path("id").asLong());
                case "consume" -> {
                    f.consumes++;
                    long id = op.path("id").asLong();
                    if (id >= 0) {
                        f.consumed.set((int) id);
                    }
                    int gen = op.path("gen").asInt(-1);
                    if (gen >= 0) {
                        f.generationsKnown = true;
                        f.ownersByGenerationPartition.computeIfAbsent("generation " + gen
                                        + ", partition " + op.path("partition").asInt(), k -> new HashSet<>())
                                .add(op.path("member").asText());
                    }
                }
                case "commit" -> {
                    if (type.equals("ok")) {
                        f.commitsOk++;
                        JsonNode offsets = op.path("offsets");
                        offsets.fieldNames().forEachRemaining(p -> {
                            int partition = Integer.parseInt(p);
                            long o = offsets.get(p).asLong();
                            Long before = f.lastCommit.put(partition, o);
                            if (before != null && o < before) {
                                f.backwards.add("partition " + partition + ": " + before + " -> " + o + " by "
                                        + op.path("member").asText() + " at t=" + op.path("t").asLong() + " ms");
                            }
                        });
                    } else {
                        f.commitsFailed++;
                    }
                }
                case "consumer" -> f.consumerFailures++;
                case "kafka-send" -> {
                    long id = op.path("id").asLong();
                    if (type.equals("ok")) {
                        f.kafkaAcked.set((int) id);
                        f.kafkaAckedAt.put(id, op.path("partition").asInt() + "@" + op.path("offset").asLong());
                    } else {
                        f.kafkaFailed.set((int) id);
                    }
                }
                case "kafka-assign" -> {
                    f.kafkaAssignments++;
                    int gen = op.path("gen").asInt(-1);
                    if (gen >= 0) {
                        f.kafkaGenerations.add(gen);
                        op.path("partitions").forEach(p -> f.kafkaOwners.computeIfAbsent("generation " + gen
                                + ", partition " + p.asInt(), k -> new HashSet<>()).add(op.path("member").asText()));
                    }
                }
                case "kafka-read" -> {
                    f.kafkaReads++;
                    int gen = op.path("gen").asInt(-1);
                    if (gen >= 0) {
                        f.kafkaOwners.computeIfAbsent("generation " + gen + ", partition " + op.path("partition").asInt(),
                                k -> new HashSet<>()).add(op.path("member").asText());
                    }
                }
                case "kafka-commit" -> {
                    if (type.equals("ok")) {
                        f.kafkaCommitsOk++;
                    } else {
                        f.kafkaCommitsFailed++;
                    }
                }
                case "kafka-consumer" -> f.kafkaConsumerFailures++;
                case "kafka-producer" -> {
                    if (type.equals("fail")) {
                        f.kafkaProducerFailures++;
                    }
                }
                case "heal" -> {
                    if (type.equals("fail")) {
                        f.healFailures++;
                    }
                }
                case "fault" -> {
                    if (type.equals("start")) {
                        f.faults.merge(op.path("kind").asText(), 1, Integer::sum);
                    }
                }
                default -> {
                }
            }
        });
        return f;
    }

    /** Checks a finished run: its history and its tables. */
    public static Report check(long seed, Path historyFile, List<Cluster.Table> tables, int members) {
        return check(seed, historyFile, tables, members, null);
    }

    /** As above, with the Kafka topic as read back after the run ({@code kafka} null when the run had no Kafka clients). */
    public static Report check(long seed, Path historyFile, List<Cluster.Table> tables, int members, KafkaWorkload.ReadBack kafka) {
        Facts f = read(historyFile);
        List<Report.TableResult> results = new ArrayList<>();
        for (Cluster.Table t : tables) {
            BitSet present = new BitSet();
            ClickHouseServer clickHouse = t.server();
            for (String line : clickHouse.queryLines("SELECT id FROM " + t.name() + " GROUP BY id")) {
                present.set((int) Long.parseLong(line.trim()));
            }
            long rows = clickHouse.queryLong("SELECT count() FROM " + t.name());
            BitSet lost = (BitSet) f.acked.clone();
            lost.andNot(present);
            BitSet ambiguous = (BitSet) present.clone();
            ambiguous.andNot(f.acked);
            results.add(new Report.TableResult(t.strategy(), t.name(), t.exactlyOnce(), rows, present.cardinality(),
                    lost.cardinality(), rows - present.cardinality(), ambiguous.cardinality(), first(lost, 10)));
        }
        return report(seed, f, results, members, kafka);
    }

    static Report report(long seed, Facts f, List<Report.TableResult> results, int members) {
        return report(seed, f, results, members, null);
    }

    /** The verdict from the history's facts, the tables' results and the Kafka topic read back (or null). */
    static Report report(long seed, Facts f, List<Report.TableResult> results, int members, KafkaWorkload.ReadBack kafka) {
        long groupLost = -1;
        List<Long> groupLostExamples = List.of();
        if (members > 0) {
            BitSet lost = (BitSet) f.acked.clone();
            lost.andNot(f.consumed);
            groupLost = lost.cardinality();
            groupLostExamples = first(lost, 10);
        }
        List<String> twoOwners = new ArrayList<>();
        f.ownersByGenerationPartition.forEach((k, v) -> {
            if (v.size() > 1) {
                twoOwners.add(k + " processed by " + v);
            }
        });
        return new Report(seed, f.faults, f.acked.cardinality(), f.failed.cardinality(), results, groupLost,
                groupLostExamples, f.consumes, f.commitsOk, f.commitsFailed, f.backwards, f.generationsKnown, twoOwners,
                f.consumerFailures, f.healFailures, kafka == null ? null : kafka(f, kafka));
    }

    /** The Kafka clients' verdict: the acknowledged sends against the topic read back, and the group's owners. */
    static Report.KafkaResult kafka(Facts f, KafkaWorkload.ReadBack topic) {
        BitSet present = new BitSet();
        List<Long> duplicated = new ArrayList<>();
        List<String> misplaced = new ArrayList<>();
        topic.positions().forEach((id, at) -> {
            if (id >= 0) {
                present.set((int) (long) id);
            }
            if (at.size() > 1) {
                duplicated.add(id);
            }
        });
        duplicated.sort(null);
        BitSet lost = (BitSet) f.kafkaAcked.clone();
        lost.andNot(present);
        BitSet ambiguous = (BitSet) present.clone();
        ambiguous.andNot(f.kafkaAcked);
        new TreeMap<>(f.kafkaAckedAt).forEach((id, at) -> {
            List<String> found = topic.positions().get(id);
            if (found != null && !found.contains(at)) {
                misplaced.add("id " + id + " acknowledged at " + at + ", read at " + found);
            }
        });
        List<String> twoOwners = new ArrayList<>();
        f.kafkaOwners.forEach((k, v) -> {
            if (v.size() > 1) {
                twoOwners.add(k + " owned by " + new java.util.TreeSet<>(v));
            }
        });
        return new Report.KafkaResult(f.kafkaAcked.cardinality(), f.kafkaFailed.cardinality(), topic.records(),
                present.cardinality(), lost.cardinality(), first(lost, 10), duplicated.size(),
                duplicated.subList(0, Math.min(10, duplicated.size())), misplaced, ambiguous.cardinality(),
                topic.complete(), f.kafkaProducerFailures, f.kafkaGenerations.size(), f.kafkaAssignments, f.kafkaReads,
                f.kafkaCommitsOk, f.kafkaCommitsFailed, f.kafkaConsumerFailures, twoOwners);
    }

    private static List<Long> first(BitSet s, int n) {
        List<Long> out = new ArrayList<>();
        for (int i = s.nextSetBit(0); i >= 0 && out.size() < n; i = s.nextSetBit(i + 1)) {
            out.add((long) i);
        }
        return out;
    }
}
