package io.sluice.ingest.internal;

import io.sluice.ingest.Guarantee;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The journal's guarantee follows from what the server and the table offer. Only the 18.16 modes run against a
 * real server here (ExactlyOnceTest); the insert_deduplication_token mode (22.2+) is checked as a selection only.
 */
class GuaranteeSelectionTest {
    private static final Map<String, String> WITH_OFFSETS = columns(true);
    private static final Map<String, String> WITHOUT_OFFSETS = columns(false);

    private static Map<String, String> columns(boolean offsets) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("id", "UInt64");
        if (offsets) {
            m.put(ClickHouseTarget.PARTITION_COLUMN, "UInt32");
            m.put(ClickHouseTarget.OFFSET_COLUMN, "UInt64");
        }
        return m;
    }

    @Test
    void anOldServerWithAPlainMergeTreeAndOffsetColumnsGetsTheIdempotentInsert() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "18.16.1", Set.of("insert_deduplicate"), WITH_OFFSETS,
                "MergeTree", "MergeTree ORDER BY id SETTINGS index_granularity = 8192");
        assertThat(OffsetRangeIngestor.choose(t)).isEqualTo(Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT);
    }

    @Test
    void aReplicatedTableWithOffsetColumnsGetsTheReplicatedGuaranteeOnAnyVersion() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "18.16.1", Set.of(), WITH_OFFSETS,
                "ReplicatedMergeTree", "ReplicatedMergeTree('/clickhouse/tables/t', 'r1') ORDER BY id");
        assertThat(OffsetRangeIngestor.choose(t)).isEqualTo(Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP);
    }

    @Test
    void aNewServerWithADeduplicatingMergeTreeUsesTheDeduplicationToken() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "23.8.2.7", Set.of("insert_deduplication_token"), WITH_OFFSETS,
                "MergeTree", "MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 1000, index_granularity = 8192");
        assertThat(t.deduplicatesInserts()).isTrue();
        assertThat(OffsetRangeIngestor.choose(t)).isEqualTo(Guarantee.EXACTLY_ONCE_DEDUP_TOKEN);
    }

    @Test
    void aNewServerWhoseMergeTreeDoesNotDeduplicateStillGetsTheIdempotentInsert() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "23.8.2.7", Set.of("insert_deduplication_token"), WITH_OFFSETS,
                "MergeTree", "MergeTree ORDER BY id SETTINGS index_granularity = 8192");
        assertThat(OffsetRangeIngestor.choose(t)).isEqualTo(Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT);
    }

    @Test
    void withoutOffsetColumnsTheGuaranteeIsAtLeastOnceSaidPlainly() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "23.8.2.7", Set.of("insert_deduplication_token"), WITHOUT_OFFSETS,
                "ReplicatedMergeTree", "ReplicatedMergeTree('/t', 'r1') ORDER BY id");
        assertThat(OffsetRangeIngestor.choose(t)).isEqualTo(Guarantee.AT_LEAST_ONCE);
        assertThat(Guarantee.AT_LEAST_ONCE.label()).isEqualTo("at-least-once");
    }

    @Test
    void theIdempotentStatementKeepsOnlyOffsetsNotYetInTheTableOfThatPartitionAndRange() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "18.16.1", Set.of(), WITH_OFFSETS, "MergeTree", "");
        IdempotentInsert.Statement s = new IdempotentInsert(t, null, RowFormat.Provenance.OFFSETS).offsets(3, 100, 199, "q-3-0");
        assertThat(s.sql()).isEqualTo("INSERT INTO d.t (id, _sluice_partition, _sluice_offset) SELECT id, _sluice_partition,"
                + " _sluice_offset FROM sluice_batch WHERE _sluice_offset NOT IN (SELECT _sluice_offset FROM d.t WHERE"
                + " _sluice_partition = 3 AND _sluice_offset BETWEEN 100 AND 199)");
        assertThat(s.structure()).isEqualTo("id UInt64, _sluice_partition UInt32, _sluice_offset UInt64");
        assertThat(s.format()).isEqualTo("JSONEachRow");
        assertThat(s.queryId()).isEqualTo("q-3-0");
    }

    @Test
    void onAReplicaTheIdempotentStatementRefusesToRunWhileARowOfItsRangeIsInAPartNotRegisteredInZooKeeper() {
        ClickHouseTarget t = ClickHouseTarget.describe("d.t", "18.16.1", Set.of(), WITH_OFFSETS, "ReplicatedMergeTree", "");
        IdempotentInsert.Statement s = IdempotentInsert.onReplica(t, null, "/clickhouse/tables/01/d.t/replicas/r1")
                .offsets(3, 100, 199, "q-3-0");
        assertThat(s.sql()).isEqualTo("INSERT INTO d.t (id, _sluice_partition, _sluice_offset) SELECT id, _sluice_partition,"
                + " _sluice_offset FROM sluice_batch WHERE throwIf((SELECT count() FROM d.t WHERE _sluice_partition = 3 AND"
                + " _sluice_offset BETWEEN 100 AND 199 AND _part NOT IN (SELECT name FROM system.zookeeper WHERE path ="
                + " '/clickhouse/tables/01/d.t/replicas/r1/parts')) > 0) = 0 AND _sluice_offset NOT IN (SELECT _sluice_offset"
                + " FROM d.t WHERE _sluice_partition = 3 AND _sluice_offset BETWEEN 100 AND 199)");
        assertThat(s.queryId()).isEqualTo("q-3-0");
    }

    @Test
    void topLevelKeysAreFoundEvenWhenEscapedButNotInValuesOrNestedObjects() {
        List<String> reserved = List.of("_sluice_offset");
        assertThat(JsonKeys.firstTopLevelKeyIn(bytes("{\"a\":1,\"_sluice_offset\":2}"), reserved)).isEqualTo("_sluice_offset");
        assertThat(JsonKeys.firstTopLevelKeyIn(bytes("{\"\\u005fsluice_offset\":2}"), reserved)).isEqualTo("_sluice_offset");
        assertThat(JsonKeys.firstTopLevelKeyIn(bytes("{\"a\":\"_sluice_offset\"}"), reserved)).isNull();
        assertThat(JsonKeys.firstTopLevelKeyIn(bytes("{\"a\":{\"_sluice_offset\":1},\"b\":[{\"_sluice_offset\":1}]}"), reserved)).isNull();
        assertThat(JsonKeys.firstTopLevelKeyIn(bytes("{\"a\":\"x\\\",\\\"_sluice_offset\\\":1\"}"), reserved)).isNull();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
