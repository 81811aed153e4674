package io.sluice.ingest.internal;

import io.sluice.ingest.RowEncoder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An INSERT that the server applies at most once per row, on any ClickHouse version (verified on 18.16): the
 * batch travels as the request's <i>external data</i> (a temporary table {@value #EXTERNAL} in a
 * {@code multipart/form-data} body), and the statement inserts only the rows whose provenance is not in the target
 * yet:
 *
 * <pre>
 *   INSERT INTO db.t (c1, ..., _sluice_partition, _sluice_offset)
 *   SELECT c1, ..., _sluice_partition, _sluice_offset FROM sluice_batch
 *   WHERE _sluice_offset NOT IN (SELECT _sluice_offset FROM db.t
 *                                WHERE _sluice_partition = P AND _sluice_offset BETWEEN first AND last)
 * </pre>
 *
 * <b>Exclusion.</b> The filter and the insert are not one atomic step, so two statements over overlapping rows must
 * never run at the same time. Every statement over offsets of a {@linkplain #SLOT slot} — a fixed range of
 * {@value #SLOT} offsets of one partition, the same for every member whatever its {@code batch.rows},
 * {@code batch.bytes} or {@code linger.ms} — carries the slot's {@code query_id} ({@link #slotQueryId}). A batch
 * never crosses a slot boundary, so any two batches that overlap, cut by whatever settings, share their id;
 * ClickHouse refuses a query whose id is already running (code 216, retried), so they never evaluate the filter
 * at the same time, and a copy that reaches the server late — after its client timed out and a retry landed the
 * rows, or from a member that was paused past its session — finds them present and adds the rest only. A partial
 * landing (a 5xx after some blocks were written) is harmless for the same reason.
 *
 * <p><b>On a {@code Replicated*MergeTree}</b> ({@link #onReplica}: one server, every member inserting into the same
 * replica, so the query id excludes there) the statement also refuses to run while a row of the range is in a part
 * <i>not registered</i> in ZooKeeper under that replica ({@code system.zookeeper}): such a part is what a
 * {@code 319 UNKNOWN_STATUS_OF_INSERT} can leave behind, visible to queries but moved aside by the replica later, so
 * counting its rows as present would lose them, and inserting them again would show them twice until then. The
 * guard is a scalar subquery, evaluated before any row is inserted:
 *
 * <pre>
 *   ... WHERE throwIf((SELECT count() FROM db.t WHERE _sluice_partition = P AND _sluice_offset BETWEEN first AND last
 *                      AND _part NOT IN (SELECT name FROM system.zookeeper WHERE path = '&lt;replica_path&gt;/parts')) &gt; 0) = 0
 *         AND _sluice_offset NOT IN (...)
 * </pre>
 *
 * The server answers {@value #UNREGISTERED_PART_OF_RANGE} ({@code FUNCTION_THROW_IF_VALUE_IS_NON_ZERO}) and inserts
 * nothing; the caller waits until the replica dropped the part ({@link ReplicatedLanding}) and sends the statement
 * again. While the statement runs no other statement over the slot runs on that server (the query id), so no new
 * part of the range appears between the guard and the insert.
 *
 * <p>Cost: the filter reads the range's provenance columns from the target (primary-key range when the table is
 * ordered by them). Limitation: in JSON mode the external table has every insertable column of the target, so an
 * event that omits a column with a {@code DEFAULT} expression gets the type's default instead of the expression.
 */
public final class IdempotentInsert {
    /** The external table's name in the request. */
    public static final String EXTERNAL = "sluice_batch";

    /**
     * Offsets per exclusion slot: a constant, never derived from configuration, so that members with different
     * batch settings (a rolling restart that changes {@code batch.rows} while an old INSERT is still on its way)
     * map overlapping ranges onto the same query id. 2^20 = ClickHouse's {@code max_insert_block_size}: a batch
     * (at most 1,000,000 rows) inside one slot is one block, which the server inserts atomically.
     */
    public static final long SLOT = 1L << 20;

    /** The query id of every statement over offsets of {@code offset}'s slot of that topic-partition. */
    public static String slotQueryId(String table, String topic, int partition, long offset) {
        return "sluice-" + table + "-" + topic + "-" + partition + "-s" + Math.floorDiv(offset, SLOT);
    }

    /** True if offsets {@code a} and {@code b} lie in the same slot (share the query id). */
    public static boolean sameSlot(long a, long b) {
        return Math.floorDiv(a, SLOT) == Math.floorDiv(b, SLOT);
    }

    /** What the server answers when {@link #onReplica}'s guard finds a row of the range in an unregistered part. */
    public static final int UNREGISTERED_PART_OF_RANGE = 395;

    /** One request: statement, query id, and how the server reads the external data. */
    public record Statement(String sql, String queryId, String format, String structure) {
    }

    private final String table;
    private final String columnList;
    private final String format;
    private final String structure;
    /** {@code <replica_path>/parts} of the replica the statements run on ({@link #onReplica}), else null. */
    private final String registeredParts;
    /**
     * A condition that must be 0 for the statement to run, evaluated (as scalar subqueries) before the rows are
     * filtered and inserted, else empty: a shard's writer fence ({@link #onShardReplica}, {@link ShardWriter}).
     */
    private final String fence;

    /**
     * @param encoder null for JSON passthrough (the external table has every insertable column of the target), or
     *                the encoder whose columns, followed by the provenance columns, are the RowBinary row
     */
    public IdempotentInsert(ClickHouseTarget target, RowEncoder encoder, RowFormat.Provenance provenance) {
        this(target, encoder, provenance, null);
    }

    /**
     * For a {@code Replicated*MergeTree} whose statements all run on the replica at {@code replicaPath} (its
     * {@code system.replicas.replica_path} in ZooKeeper): {@link #offsets} also refuses ranges with rows in parts not
     * registered there (see the class comment).
     */
    public static IdempotentInsert onReplica(ClickHouseTarget target, RowEncoder encoder, String replicaPath) {
        if (replicaPath == null || replicaPath.isBlank() || replicaPath.indexOf('\'') >= 0) {
            throw new IllegalArgumentException("replica path: " + replicaPath);
        }
        return new IdempotentInsert(target, encoder, RowFormat.Provenance.OFFSETS, replicaPath + "/parts", "");
    }

    /**
     * For one replica of a shard of a cluster target ({@code clickhouse.shards}): as {@link #onReplica}, and the
     * statement also refuses ({@value #UNREGISTERED_PART_OF_RANGE}) unless {@code fence} is 0 — the shard's writer
     * fence ({@link ShardWriter#fence}): it is the shard's writer replica, and it holds every part the other replicas
     * committed.
     */
    static IdempotentInsert onShardReplica(ClickHouseTarget target, RowEncoder encoder, String replicaPath, String fence) {
        if (replicaPath == null || replicaPath.isBlank() || replicaPath.indexOf('\'') >= 0 || fence == null || fence.isBlank()) {
            throw new IllegalArgumentException("replica path: " + replicaPath + ", fence: " + fence);
        }
        return new IdempotentInsert(target, encoder, RowFormat.Provenance.OFFSETS, replicaPath + "/parts", fence);
    }

    private IdempotentInsert(ClickHouseTarget target, RowEncoder encoder, RowFormat.Provenance provenance, String registeredParts) {
        this(target, encoder, provenance, registeredParts, "");
    }

    private IdempotentInsert(ClickHouseTarget target, RowEncoder encoder, RowFormat.Provenance provenance, String registeredParts,
                             String fence) {
        this.registeredParts = registeredParts;
        this.fence = fence;
        this.table = target.table();
        List<String> cols = new ArrayList<>();
        if (encoder == null) {
            cols.addAll(target.insertableColumns().keySet());
            this.format = "JSONEachRow";
        } else {
            cols.addAll(encoder.columns());
            if (provenance == RowFormat.Provenance.OFFSETS) {
                cols.add(ClickHouseTarget.PARTITION_COLUMN);
                cols.add(ClickHouseTarget.OFFSET_COLUMN);
            } else if (provenance == RowFormat.Provenance.ENTRIES) {
                cols.add(ClickHouseTarget.ENTRY_COLUMN);
                cols.add(ClickHouseTarget.INDEX_COLUMN);
            }
            this.format = "RowBinary";
        }
        StringBuilder st = new StringBuilder();
        Map<String, String> types = target.insertableColumns();
        for (String c : cols) {
            String type = types.containsKey(c) ? types.get(c) : target.columnType(c);
            st.append(st.length() == 0 ? "" : ", ").append(c).append(' ').append(type);
        }
        this.structure = st.toString();
        this.columnList = String.join(", ", cols);
    }

    /**
     * Test only: {@code -Dsluice.test.breakIdempotentFilter=true} drops the filter of {@link #offsets}, so every
     * copy of a batch inserts its rows. The fault suite sets it in one test to show that its checker reports the
     * duplicates this causes ({@code BrokenGuaranteeTest}); nothing else may set it.
     */
    static final boolean FILTER_BROKEN_FOR_TESTS = Boolean.getBoolean("sluice.test.breakIdempotentFilter");

    /** Rows of journal partition {@code partition} with offsets in [first, last], inserted unless already present. */
    public Statement offsets(int partition, long first, long last, String queryId) {
        if (FILTER_BROKEN_FOR_TESTS) {
            return new Statement("INSERT INTO " + table + " (" + columnList + ") SELECT " + columnList + " FROM " + EXTERNAL,
                    queryId, format, structure);
        }
        String range = ClickHouseTarget.PARTITION_COLUMN + " = " + partition + " AND " + ClickHouseTarget.OFFSET_COLUMN
                + " BETWEEN " + first + " AND " + last;
        String guard = (fence.isEmpty() ? "" : "throwIf(" + fence + ") = 0 AND ")
                + (registeredParts == null ? "" : "throwIf((SELECT count() FROM " + table + " WHERE " + range
                + " AND _part NOT IN (SELECT name FROM system.zookeeper WHERE path = '" + registeredParts + "')) > 0) = 0 AND ");
        String sql = "INSERT INTO " + table + " (" + columnList + ") SELECT " + columnList + " FROM " + EXTERNAL
                + " WHERE " + guard + ClickHouseTarget.OFFSET_COLUMN + " NOT IN (SELECT " + ClickHouseTarget.OFFSET_COLUMN
                + " FROM " + table + " WHERE " + range + ")";
        return new Statement(sql, queryId, format, structure);
    }

    /** Rows of stream entries, each identified by (entry id, index in the entry), inserted unless already present. */
    public Statement entries(String queryId) {
        String e = ClickHouseTarget.ENTRY_COLUMN;
        String i = ClickHouseTarget.INDEX_COLUMN;
        String sql = "INSERT INTO " + table + " (" + columnList + ") SELECT " + columnList + " FROM " + EXTERNAL
                + " WHERE (" + e + ", " + i + ") NOT IN (SELECT " + e + ", " + i + " FROM " + table + " WHERE " + e
                + " IN (SELECT " + e + " FROM " + EXTERNAL + "))";
        return new Statement(sql, queryId, format, structure);
    }
}
