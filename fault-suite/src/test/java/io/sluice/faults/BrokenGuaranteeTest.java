package io.sluice.faults;

import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The suite can fail: with the idempotent filter of the offset-range strategy switched off in the
 * {@code sluice ingest} process (a test-only property), the same run that {@link FaultInjectionSuiteTest} passes —
 * real processes, late INSERTs and lost responses from the ClickHouse proxy — must end with the checker reporting
 * duplicated rows in the table where exactly-once is stated.
 */
@ExtendWith(ServicesExtension.class)
class BrokenGuaranteeTest {
    @Test
    void theCheckerReportsDuplicatesWhenTheIdempotentFilterIsSwitchedOffOnPurpose(ClickHouseServer clickHouse) throws Exception {
        Path dir = Path.of("target", "torture", "broken-" + System.currentTimeMillis()).toAbsolutePath();
        TortureConfig config = TortureConfig.of(20261125L, Duration.ofSeconds(20), dir.resolve("run"))
                .withStrategies(Set.of("journal"))
                .withFaults(EnumSet.of(FaultKind.CLICKHOUSE_LATE_REQUESTS, FaultKind.CLICKHOUSE_LOST_RESPONSES))
                .withLoad(2, 100, 0).withKafkaMembers(0).withSettle(Duration.ofSeconds(60))
                .withIngestEnv(Map.of("JAVA_TOOL_OPTIONS", "-Dsluice.test.breakIdempotentFilter=true"));
        Report report = Torture.run(config, System.out);
        System.out.println("[reliability] fault suite with the idempotent filter switched off on purpose\n" + report.format());
        assertThat(report.faults()).as("faults injected").containsKeys("CLICKHOUSE_LATE_REQUESTS", "CLICKHOUSE_LOST_RESPONSES");
        assertThat(report.passed()).as("the checker's verdict on a broken guarantee").isFalse();
        assertThat(report.violations()).anyMatch(v -> v.startsWith("journal: ") && v.contains("duplicated rows where exactly-once is stated"));
    }
}
