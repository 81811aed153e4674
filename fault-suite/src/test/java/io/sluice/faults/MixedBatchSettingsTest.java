package io.sluice.faults;

import io.sluice.testkit.ClickHouseCluster;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 24: the offset-range strategy's exclusion does not depend on configuration. Two {@code sluice ingest}
 * members of one group on one table, one with {@code batch.rows=500, linger.ms=50}, the other with
 * {@code batch.rows=777, batch.bytes=4096, linger.ms=7}, every third INSERT delivered after its client timed out,
 * and the first member SIGSTOPped past its session (until the coordinator shows the other member owning all four
 * partitions) and resumed as a zombie: every acknowledged event lands once — into a {@code MergeTree}, and into a
 * {@code ReplicatedMergeTree} on a private ClickHouse with its own private ZooKeeper.
 */
@ExtendWith(ServicesExtension.class)
class MixedBatchSettingsTest {
    @Test
    void membersWithDifferentBatchSettingsLateInsertsAndAPausedMemberLandEveryEventExactlyOnce(ClickHouseServer clickHouse) throws Exception {
        Path dir = Path.of("target", "torture", "mixed-settings-" + System.currentTimeMillis()).toAbsolutePath();
        MixedSettings.Result r = MixedSettings.run(dir, 400, 45);
        System.out.println("[reliability] two members with different batch settings: " + r);
        assertFaultsHappenedAndEveryEventLandedOnce(r);
    }

    /**
     * The same on a {@code ReplicatedMergeTree}: block deduplication alone only drops identical blocks, and the two
     * members (and the zombie's late INSERTs) cut overlapping ranges into different blocks.
     */
    @Test
    void onAReplicatedTableMembersWithDifferentBatchSettingsLateInsertsAndAPausedMemberLandEveryEventExactlyOnce(
            ClickHouseServer clickHouse) throws Exception {
        assumeTrue(clickHouse.isPrivate(), "needs private servers (ZooKeeper and a replicated ClickHouse)");
        Path dir = Path.of("target", "torture", "mixed-settings-replicated-" + System.currentTimeMillis()).toAbsolutePath();
        MixedSettings.Result r = MixedSettings.run(dir, 400, 45, true);
        System.out.println("[reliability] two members with different batch settings on a ReplicatedMergeTree: " + r);
        assertFaultsHappenedAndEveryEventLandedOnce(r);
    }

    /**
     * The same against a cluster target ({@code clickhouse.shards}): one shard of two replicas with their own
     * ZooKeeper, each member listing both replicas; besides the late INSERTs and the paused member, the first replica
     * is SIGKILLed while both members insert (INSERTs fail over to the second) and started again just before the
     * zombie's INSERTs are held. Replicated block deduplication alone drops only identical blocks.
     */
    @Test
    void onTheReplicasOfAShardMembersWithDifferentBatchSettingsLateInsertsAPausedMemberAndAReplicaKillLandEveryEventExactlyOnce(
            ClickHouseServer clickHouse) throws Exception {
        assumeTrue(clickHouse.isPrivate(), "needs private servers (ZooKeeper and a ClickHouse cluster)");
        Path dir = Path.of("target", "torture", "mixed-settings-shard-" + System.currentTimeMillis()).toAbsolutePath();
        MixedSettings.Result r;
        try (ClickHouseCluster shard = ClickHouseCluster.start(1, 2)) {
            r = MixedSettings.runOnShard(dir, 400, 20, shard);
        }
        System.out.println("[reliability] two members with different batch settings on the replicas of a shard: " + r);
        assertThat(r.failedOver()).as("rows landed on the second replica while the first was down (" + r + ")").isTrue();
        assertFaultsHappenedAndEveryEventLandedOnce(r);
    }

    /** The faults were injected (late INSERTs, a zombie's INSERTs after its session, a takeover), and nothing lost or doubled. */
    private static void assertFaultsHappenedAndEveryEventLandedOnce(MixedSettings.Result r) {
        assertThat(r.delayedInserts()).as("INSERTs the proxy delivered late").isPositive();
        assertThat(r.insertsHeldPastTakeover()).as("INSERTs of the paused member delivered after its session").isPositive();
        assertThat(r.partitionsOfBWhilePaused()).as("partitions the coordinator gave B while A was paused").isEqualTo(4);
        assertThat(r.acked()).as("acknowledged events").isPositive();
        assertThat(r.lost()).as("acknowledged events missing (" + r + ")").isZero();
        assertThat(r.duplicated()).as("duplicated rows (" + r + ")").isZero();
    }
}
