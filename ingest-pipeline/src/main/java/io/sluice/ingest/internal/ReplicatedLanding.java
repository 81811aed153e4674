package io.sluice.ingest.internal;

import io.sluice.ingest.IngestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * What of an offset range is really in a {@code Replicated*MergeTree}: rows count only when the part holding them
 * is registered in ZooKeeper.
 *
 * <p>Why: when ClickHouse (18.16 checked) loses ZooKeeper while it commits a part, it keeps the part locally,
 * visible to queries, answers {@code 319 UNKNOWN_STATUS_OF_INSERT}, and enqueues a check of the part for 5 minutes
 * later ({@code MAX_AGE_OF_LOCAL_PART_THAT_WASNT_ADDED_TO_ZOOKEEPER}), which moves a part that never reached
 * ZooKeeper aside ("Unexpected part ... Removing"). On 18.16 that check runs only when the replica's check task is
 * woken again (another part check, a new ZooKeeper session, a restart: a restart, or {@code DETACH}/{@code ATTACH
 * TABLE}, moves such a part aside at once); observed here: still there after 8 minutes. Until then such an
 * <i>unregistered</i> part looks landed but is not; and a retry of the same block is not deduplicated (its block
 * id never reached ZooKeeper), so retrying at once shows every row twice — the 6 duplicated rows the fault suite
 * found.
 *
 * <p>So after a 319 the batch is not retried blindly ({@link #afterUnknownStatus}): on every replica of the shard
 * that answers, the parts holding the range's rows are listed ({@code _part}) and looked up under the replica's
 * {@code parts} node in ZooKeeper ({@code system.zookeeper}). All rows in registered parts: the batch landed, no
 * retry. An unregistered part holding some: wait (polling, bounded by the caller's abandon check, with a warning
 * naming the part and the remedy every 20 looks) until the replica dropped it, then decide again: no row is ever
 * visible twice and none is lost, at the cost of the partition waiting. Nothing registered and nothing unregistered: retry the identical block (a late copy
 * of it, still on its way, is then deduplicated by its block id). A replica that is read-only (ZooKeeper still
 * away) makes it wait too, since its answer is needed. A replica that refuses the connection (killed, stopped) is
 * left out while at least one other answers: it serves no query, so nothing it holds is visible; a part it
 * registered reaches the others by replication and a retried identical block is deduplicated by its block id; a part
 * it never registered is dropped when it starts again. So a replica's SIGKILL does not stall its shard.
 *
 * <p>Thread-safety: stateless apart from the configuration; called from insert threads and the poller.
 */
final class ReplicatedLanding {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedLanding.class);

    /** What a batch's range is on the shard after an unknown-status insert. */
    enum Outcome {
        /** every row is in a registered part: the batch landed */
        LANDED,
        /** no row in any part: send the identical block again */
        ABSENT,
        /** some rows in registered parts (a batch cut differently before a restart), none unregistered */
        PARTLY
    }

    private final String database;
    private final String tableName;
    private final String table;

    ReplicatedLanding(String database, String tableName) {
        this.database = database;
        this.tableName = tableName;
        this.table = database + "." + tableName;
    }

    /**
     * Decides what of [first, last] of {@code partition} is on the shard, waiting while a replica is read-only,
     * unreachable, or holds an unregistered part of the range. {@code rows} is the batch's row count.
     *
     * @throws IngestException when {@code abandon} turns true while waiting
     */
    Outcome afterUnknownStatus(Shards.Shard shard, int partition, long first, long last, int rows, BooleanSupplier abandon,
                               Backoff backoff, String failure) {
        int waited = 0;
        while (true) {
            Result r = look(shard, partition, first, last);
            if (r.ready) {
                Outcome o = r.registeredOffsets.isEmpty() ? Outcome.ABSENT
                        : r.registeredOffsets.size() >= rows ? Outcome.LANDED : Outcome.PARTLY;
                if (o == Outcome.ABSENT) {
                    LOG.debug("after an INSERT of unknown outcome ({}): partition {} offsets [{}, {}] on {}: absent, sent again",
                            failure, partition, first, last, table);
                } else {
                    LOG.info("after an INSERT of unknown outcome ({}): partition {} offsets [{}, {}] on {}: {} ({} of {} rows in"
                            + " parts registered in ZooKeeper)", failure, partition, first, last, table, o, r.registeredOffsets.size(), rows);
                }
                return o;
            }
            if (waited++ % 20 == 0) {
                LOG.warn("after an INSERT of unknown outcome ({}): partition {} offsets [{}, {}] on {}: waiting before any"
                        + " retry: {}", failure, partition, first, last, table, r.reason);
            }
            if (abandon.getAsBoolean()) {
                throw new IngestException("gave up resolving an INSERT of unknown outcome: " + r.reason, 319, false, true, null);
            }
            try {
                backoff.pause();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IngestException("interrupted resolving an INSERT of unknown outcome", 319, false, true, e);
            }
        }
    }

    /** Offsets of [first, last] in registered parts on some replica; waits for no one (null when not decidable now). */
    Set<Long> registeredOffsets(Shards.Shard shard, int partition, long first, long last) {
        Result r = look(shard, partition, first, last);
        if (!r.ready) {
            throw new IngestException("cannot tell what landed yet: " + r.reason, -1, false, true, null);
        }
        return r.registeredOffsets;
    }

    private record Result(boolean ready, String reason, Set<Long> registeredOffsets) {
    }

    private Result look(Shards.Shard shard, int partition, long first, long last) {
        Set<Long> registered = new HashSet<>();
        int unreachable = 0;
        for (ClickHouseHttp replica : shard.replicas()) {
            try {
                String info = replica.query("SELECT zookeeper_path, replica_name, is_readonly FROM system.replicas WHERE database = '"
                        + database + "' AND table = '" + tableName + "' FORMAT TabSeparated").strip();
                String[] f = info.split("\t");
                if (f.length < 3) {
                    return new Result(false, "no replica row for " + table + " on " + replica.url(), Set.of());
                }
                if (!f[2].equals("0")) {
                    return new Result(false, "replica " + replica.url() + " is read-only (ZooKeeper away)", Set.of());
                }
                Map<String, Set<Long>> byPart = new HashMap<>();
                for (String line : ClickHouseTarget.lines(replica.query("SELECT _part, " + ClickHouseTarget.OFFSET_COLUMN + " FROM "
                        + table + " WHERE " + ClickHouseTarget.PARTITION_COLUMN + " = " + partition + " AND "
                        + ClickHouseTarget.OFFSET_COLUMN + " BETWEEN " + first + " AND " + last + " FORMAT TabSeparated"))) {
                    String[] pl = line.split("\t");
                    byPart.computeIfAbsent(pl[0], k -> new HashSet<>()).add(Long.parseLong(pl[1].strip()));
                }
                if (byPart.isEmpty()) {
                    continue;
                }
                StringBuilder names = new StringBuilder();
                for (String part : byPart.keySet()) {
                    names.append(names.length() == 0 ? "" : ", ").append('\'').append(part).append('\'');
                }
                Set<String> inZooKeeper = new HashSet<>(ClickHouseTarget.lines(replica.query("SELECT name FROM system.zookeeper WHERE path = '"
                        + f[0] + "/replicas/" + f[1] + "/parts' AND name IN (" + names + ") FORMAT TabSeparated")));
                for (Map.Entry<String, Set<Long>> e : byPart.entrySet()) {
                    if (!inZooKeeper.contains(e.getKey())) {
                        return new Result(false, "part " + e.getKey() + " on " + replica.url() + " holds " + e.getValue().size()
                                + " rows of the range but is not registered in ZooKeeper (an INSERT answered 319); waiting until the"
                                + " replica drops it (its part check, 5 minutes at the earliest; at once when the replica restarts"
                                + " or the table is detached and attached)", Set.of());
                    }
                    registered.addAll(e.getValue());
                }
            } catch (IngestException e) {
                if (e.serverCode() <= 0 && !(e.getCause() instanceof java.net.http.HttpTimeoutException)) {
                    // refused (killed, stopped; a paused replica times out instead and is waited for): it serves no query, so nothing it holds is visible now;
                    // a part it registered is fetched by the others and a retried identical block is deduplicated by
                    // its block id in ZooKeeper; a part it never registered is dropped when it starts again
                    unreachable++;
                    continue;
                }
                return new Result(false, "replica " + replica.url() + " did not answer: " + e.getMessage(), Set.of());
            } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
                return new Result(false, "replica " + replica.url() + " did not answer: " + e.getMessage(), Set.of());
            }
        }
        if (unreachable == shard.replicas().size()) {
            return new Result(false, "no replica of the shard answers", Set.of());
        }
        return new Result(true, "", registered);
    }
}
