package io.sluice.ingest.internal;

import io.sluice.ingest.IngestException;
import io.sluice.ingest.RowEncoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The one replica of a shard of a cluster target ({@code clickhouse.shards}, {@code Replicated*MergeTree}) that
 * takes the shard's idempotent INSERTs now, and the <i>fence</i> every statement carries so that the server, not the
 * client, decides it: with it the per-slot query id of {@link IdempotentInsert} excludes two statements over one
 * slot on the shard as it does on one server, whatever the members' batch settings, late deliveries, paused members
 * or replica failures.
 *
 * <p><b>Writer rule.</b> The shard's replicas are ranked by their names in ZooKeeper ({@code <zookeeper_path>/replicas},
 * read once). A replica is <i>active</i> while its {@code is_active} node exists (the ephemeral node of its
 * ZooKeeper session); its <i>age</i> is how long that node has existed ({@code ctime}). With {@code T} =
 * {@code clickhouse.zookeeper.session.timeout.ms}, {@link #HANDOFF} = T and {@link #SETTLE} = 2T + 2 s, replica X
 * may write when
 * <ol>
 *   <li>X is active with age ≥ SETTLE;</li>
 *   <li>every replica ranked before X is inactive or active with age &lt; HANDOFF;</li>
 *   <li>X holds every part the others committed: no {@code get} entry of another replica in the ZooKeeper log at or
 *       after X's {@code log_pointer}, and none in X's queue (the log is read first: an entry pulled in between is
 *       in the queue);</li>
 *   <li>the statement's reading phase ends within {@code max_execution_time} = M = T/3 (at least 1 s) of the fence.</li>
 * </ol>
 * The statement checks 1-3 in scalar subqueries before it reads a row ({@link #fence}), refusing with code 395
 * otherwise; the client picks the replica by the same rule ({@link #writer()}) only to route there.
 *
 * <p><b>Why two statements over one slot never both insert.</b> On one replica the query id excludes them. On two,
 * X (statement decided at x) and Y (at y), X ranked before Y, suppose y &gt; x first. X was active at x and its
 * fence read ZooKeeper through its session, so that session lived at x and cannot expire before x + T; X's statement
 * starts writing within M &lt; T of x, with that session, and its part commits through it or not at all. Y's fence
 * needs X inactive or younger than HANDOFF at y; either means X's session of x expired, so after x + T, after X's
 * commit; Y's fence (3) then sees that commit in the log or its own queue and refuses until Y fetched the part, and
 * Y's NOT IN sees X's rows. Now x &gt; y: at y X was inactive or younger than HANDOFF, so X became active (again)
 * at a &gt; y − HANDOFF, and X's fence needs x ≥ a + SETTLE &gt; y + T + 2 s: Y's statement wrote within M of y
 * through a session that expires at the latest T after its last contact, so it committed or failed before; X's
 * fence (3) sees the commit. Two members with different batch settings, a zombie's late INSERT (fenced when it
 * arrives), a replica failover and a returning replica are all cases of this.
 *
 * <p><b>Conditions</b> (docs/ingest.md, cluster targets): the replicas' clocks agree with ZooKeeper's within the
 * 2 s margin ({@code now()} against {@code ctime}); a part's write and ZooKeeper commit take less than T − M after
 * the reading phase; T is the replicas' real session timeout. Costs: a shard moves to another replica only once its
 * writer lost its ZooKeeper session (a replica that is up in ZooKeeper but unreachable from the ingest process
 * holds its shard's partitions back), a replica (re)joining writes only SETTLE later (at a cold start the shard waits
 * SETTLE), and a returning higher-ranked replica pauses the shard for up to SETTLE − HANDOFF while it takes over.
 *
 * <p>Thread-safety: the insert threads of the shard's partitions call {@link #statement}; the writer choice is a
 * cache refreshed at most every {@link #CHOICE_MS} (a stale choice costs a refused statement, never a duplicate).
 */
final class ShardWriter {
    private static final Logger LOG = LoggerFactory.getLogger(ShardWriter.class);
    /** How long a writer choice is reused before the replicas are asked again. */
    static final long CHOICE_MS = 200;

    private final Shards.Shard shard;
    private final ClickHouseTarget target;
    private final RowEncoder encoder;
    private final String database;
    private final String tableName;
    /** seconds */
    private final long settle;
    private final long handoff;
    private final long maxExecutionSeconds;

    /** set once by {@link #init} (under the monitor) */
    private String zooKeeperPath;
    private List<String> ranked;
    /** replica name → index in {@code shard.replicas()}; filled as replicas answer */
    private final Map<String, Integer> indexOf = new HashMap<>();
    private final Map<String, IdempotentInsert> statements = new HashMap<>();
    private String chosen;
    private long chosenAt;

    ShardWriter(Shards.Shard shard, ClickHouseTarget target, RowEncoder encoder, String database, String tableName,
                long sessionTimeoutMs) {
        this.shard = shard;
        this.target = target;
        this.encoder = encoder;
        this.database = database;
        this.tableName = tableName;
        long t = Math.max(1, (sessionTimeoutMs + 999) / 1000);
        this.handoff = t;
        this.settle = 2 * t + 2;
        this.maxExecutionSeconds = Math.max(1, sessionTimeoutMs / 3000);
    }

    /** The settings every statement of the shard is sent with: {@code max_execution_time} = M (seconds). */
    Map<String, String> settings() {
        return Map.of("max_execution_time", Long.toString(maxExecutionSeconds));
    }

    /**
     * The statement for rows [first, last] of {@code partition}, fenced for the shard's current writer, with the
     * shard's client routed to that replica.
     *
     * @throws IngestException (retried by the inserter) when no replica may write now, or none answers
     */
    synchronized IdempotentInsert.Statement statement(int partition, long first, long last, String queryId) {
        init();
        long now = System.nanoTime();
        if (chosen == null || now - chosenAt > CHOICE_MS * 1_000_000L) {
            chosen = writer();
            chosenAt = now;
        }
        String name = chosen;
        Integer index = indexOf.get(name);
        if (index == null) {
            chosen = null;
            throw new IngestException("shard " + shard.number() + ": writer replica " + name + " answers none of " + urls(), -1, false, false, null);
        }
        shard.http().pin(index);
        IdempotentInsert insert = statements.computeIfAbsent(name, n -> IdempotentInsert.onShardReplica(target, encoder,
                zooKeeperPath + "/replicas/" + n, fence(n)));
        return insert.offsets(partition, first, last, queryId);
    }

    /** After a refused or failed statement: the next one asks the replicas again. */
    synchronized void forget() {
        chosen = null;
    }

    /** Zero when replica {@code x} may write now (class comment, 1-3); scalar subqueries in this order. */
    String fence(String x) {
        String replicas = zooKeeperPath + "/replicas/";
        StringBuilder f = new StringBuilder("(SELECT replica_name FROM system.replicas WHERE database = '" + database
                + "' AND table = '" + tableName + "') != '" + x + "'");
        f.append(" OR ").append(activeSince(replicas + x, settle)).append(" = 0");
        for (String before : ranked) {
            if (before.equals(x)) {
                break;
            }
            f.append(" OR ").append(activeSince(replicas + before, handoff)).append(" > 0");
        }
        String others = " AND position(value, '\\nget\\n') > 0 AND position(value, '\\nsource replica: " + x + "\\n') = 0";
        f.append(" OR (SELECT count() FROM system.zookeeper WHERE path = '").append(zooKeeperPath).append("/log'")
                .append(others).append(" AND toUInt64(substring(name, 5)) >= (SELECT toUInt64(value) FROM system.zookeeper")
                .append(" WHERE path = '").append(replicas).append(x).append("' AND name = 'log_pointer')) > 0");
        f.append(" OR (SELECT count() FROM system.zookeeper WHERE path = '").append(replicas).append(x).append("/queue'")
                .append(others).append(") > 0");
        return f.toString();
    }

    private static String activeSince(String replicaPath, long seconds) {
        return "(SELECT count() FROM system.zookeeper WHERE path = '" + replicaPath + "' AND name = 'is_active' AND ctime <= now() - "
                + seconds + ")";
    }

    /**
     * The replica that may write now by the writer rule (1, 2), as the first replica that answers sees ZooKeeper.
     *
     * @throws IngestException when none may (a higher-ranked replica is settling, or none is settled) or none answers
     */
    String writer() {
        StringBuilder q = new StringBuilder();
        for (String n : ranked) {
            q.append(q.length() == 0 ? "" : " UNION ALL ").append("SELECT '").append(n).append("', count(), toUInt32(now()) - toUInt32(max(ctime))")
                    .append(" FROM system.zookeeper WHERE path = '").append(zooKeeperPath).append("/replicas/").append(n)
                    .append("' AND name = 'is_active'");
        }
        Map<String, long[]> seen = new HashMap<>();
        for (String line : ClickHouseTarget.lines(anyReplica(q + " FORMAT TabSeparated"))) {
            String[] f = line.split("\t");
            seen.put(f[0], new long[]{Long.parseLong(f[1].strip()), Long.parseLong(f[2].strip())});
        }
        for (String n : ranked) {
            long[] s = seen.get(n);
            if (s == null || s[0] == 0 || s[1] < handoff) {
                continue; // inactive, or just (re)joined: a lower-ranked replica may still write
            }
            if (s[1] >= settle) {
                resolveNames(n);
                return n;
            }
            throw new IngestException("shard " + shard.number() + ": replica " + n + " joined " + s[1] + " s ago; it takes the"
                    + " shard's INSERTs over " + settle + " s after it joined, none before", -1, false, false, null);
        }
        throw new IngestException("shard " + shard.number() + ": no replica has been active in ZooKeeper for " + settle
                + " s yet (" + seen.keySet() + ")", -1, false, false, null);
    }

    /** Reads the ZooKeeper path and the ranked replica names once, from the first replica that answers. */
    private void init() {
        if (ranked != null) {
            return;
        }
        String path = anyReplica("SELECT zookeeper_path FROM system.replicas WHERE database = '" + database + "' AND table = '"
                + tableName + "' FORMAT TabSeparated").strip();
        if (path.isEmpty() || path.indexOf('\'') >= 0) {
            throw new IngestException("no replicated table " + database + "." + tableName + " on shard " + shard.number(), -1, false, false, null);
        }
        List<String> names = new ArrayList<>(ClickHouseTarget.lines(anyReplica("SELECT name FROM system.zookeeper WHERE path = '"
                + path + "/replicas' FORMAT TabSeparated")).stream().map(String::strip).toList());
        names.removeIf(n -> n.isEmpty() || n.indexOf('\'') >= 0 || n.indexOf('\\') >= 0);
        names.sort(null);
        this.zooKeeperPath = path;
        this.ranked = List.copyOf(names);
        resolveNames(null);
        LOG.info("shard {}: replicas ranked {} (ZooKeeper {}), writer fence: HANDOFF {} s, SETTLE {} s, max_execution_time {} s",
                shard.number(), ranked, path, handoff, settle, maxExecutionSeconds);
    }

    /** Learns the names of the replicas that answer (until {@code wanted}, if given, is known). */
    private void resolveNames(String wanted) {
        List<ClickHouseHttp> replicas = shard.replicas();
        for (int i = 0; i < replicas.size() && (wanted == null || !indexOf.containsKey(wanted)); i++) {
            if (indexOf.containsValue(i)) {
                continue;
            }
            try {
                String name = replicas.get(i).query("SELECT replica_name FROM system.replicas WHERE database = '" + database
                        + "' AND table = '" + tableName + "' FORMAT TabSeparated").strip();
                if (!name.isEmpty()) {
                    indexOf.put(name, i);
                }
            } catch (IngestException e) {
                LOG.debug("shard {}: replica {} does not answer yet: {}", shard.number(), replicas.get(i).url(), e.getMessage());
            }
        }
    }

    private String anyReplica(String sql) {
        IngestException last = null;
        for (ClickHouseHttp replica : shard.replicas()) {
            try {
                return replica.query(sql);
            } catch (IngestException e) {
                last = e;
            }
        }
        throw last;
    }

    private List<String> urls() {
        return shard.replicas().stream().map(ClickHouseHttp::url).toList();
    }
}
