package io.sluice.faults;

import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The soak of {@code scripts/soak.sh} as a test, off unless asked for: {@code -Dsluice.soak.minutes=3} runs three
 * minutes inside Maven. CI runs the same 3-minute soak through {@code scripts/soak.sh} after the Maven build
 * ({@code scripts/test.sh}), so the build itself does not wait for it. The broker and ingest processes get Netty's
 * paranoid leak detection and native memory tracking; the test fails on a lost or duplicated event or a LEAK report.
 */
@ExtendWith(ServicesExtension.class)
class SoakTest {
    @Test
    @EnabledIfSystemProperty(named = "sluice.soak.minutes", matches = "[1-9][0-9]*")
    void steadyLoadLosesNothingDuplicatesNothingAndLeaksNoBuffer(ClickHouseServer clickHouse) throws Exception {
        long minutes = Long.getLong("sluice.soak.minutes");
        String jvmArgs = System.getProperty("sluice.jvm.args", "");
        System.setProperty("sluice.jvm.args", jvmArgs + " -Dio.netty.leakDetection.level=paranoid -XX:NativeMemoryTracking=summary");
        try {
            Path dir = Path.of("target", "soak", "test-" + System.currentTimeMillis()).toAbsolutePath();
            boolean passed = Soak.run(dir, minutes, -1, 0.03, 20261125L, System.out);
            assertThat(passed).as("soak verdict (report in " + dir.resolve("report.txt") + ")").isTrue();
        } finally {
            System.setProperty("sluice.jvm.args", jvmArgs);
        }
    }
}
