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
    }

    static Facts read(Path historyFile) {
        Facts f = new Facts();
        History.read(historyFile, op -> {
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
        return report(seed, f, results, members);
    }

    /** The verdict from the history's facts and the tables' results. */
    static Report report(long seed, Facts f, List<Report.TableResult> results, int members) {
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
                f.consumerFailures, f.healFailures);
    }

    private static List<Long> first(BitSet s, int n) {
        List<Long> out = new ArrayList<>();
        for (int i = s.nextSetBit(0); i >= 0 && out.size() < n; i = s.nextSetBit(i + 1)) {
            out.add((long) i);
        }
        return out;
    }
}
