package io.sluice.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Sluice never sends usage data: Chronicle's analytics client is excluded and its switches are off. */
class NoTelemetryTest {
    @TempDir
    Path dir;

    @Test
    void chronicleAnalyticsIsNotOnTheClassPath() {
        assertThatThrownBy(() -> Class.forName("net.openhft.chronicle.analytics.Analytics"))
                .isInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void openingABrokerLeavesChronicleAnalyticsAndAnnouncerDisabled() {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("t", 1));
            assertThat(System.getProperty("chronicle.analytics.disable")).isEqualTo("true");
            assertThat(System.getProperty("chronicle.announcer.disable")).isEqualTo("true");
        }
    }
}
