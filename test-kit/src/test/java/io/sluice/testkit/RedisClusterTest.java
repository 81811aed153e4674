package io.sluice.testkit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The test kit's Redis Cluster: three masters with a replica each, a master killed and replaced, a slot moved. */
class RedisClusterTest {

    @Test
    void aKilledMasterIsReplacedByItsReplicaWhichKeepsTheDataAndASlotMovesWithItsKeys() {
        assumeTrue(RedisCluster.isInstalled(), "redis-server and redis-cli are needed");
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            assertThat(cluster.nodes()).hasSize(6);
            String key = "kit:{slot-test}";
            RedisCluster.Node owner = cluster.masterOf(key);
            assertThat(owner.command("XADD", key, "*", "f", "v")).contains("-");
            assertThat(owner.command("WAIT", "1", "5000").strip()).isEqualTo("1");
            RedisCluster.Node replica = cluster.replicaOf(owner);

            owner.kill();
            RedisCluster.Node promoted = cluster.awaitNewMasterOf(key, owner);
            assertThat(promoted).isEqualTo(replica);
            assertThat(promoted.xlen(key)).isEqualTo(1);

            cluster.startAll(); // the old master rejoins as the replica of its replacement
            assertThat(cluster.replicaOf(promoted)).isEqualTo(owner);

            RedisCluster.Node other = cluster.nodes().stream()
                    .filter(n -> n != promoted && n.command("INFO", "replication").contains("role:master")).findFirst().orElseThrow();
            cluster.moveSlot(cluster.slot(key), other);
            assertThat(cluster.masterOf(key)).isEqualTo(other);
            assertThat(other.xlen(key)).isEqualTo(1);

            RedisCluster.Node otherReplica = cluster.replicaOf(other);
            cluster.failover(otherReplica);
            assertThat(cluster.masterOf(key)).isEqualTo(otherReplica);
            assertThat(otherReplica.xlen(key)).isEqualTo(1);
        }
    }
}
