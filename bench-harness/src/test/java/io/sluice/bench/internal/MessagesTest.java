package io.sluice.bench.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class MessagesTest {
    @Test
    void theTradingMessageIsAboutFortyBytesAndItsIdParsesBack() {
        byte[] m = TradeMessages.message(12_345);
        assertThat(m.length).isBetween(40, 56);
        assertThat(TradeMessages.id(m, m.length)).isEqualTo(12_345);
    }

    @Test
    void thePacerSpacesIntendedTimesByThePeriod() {
        Pacer p = new Pacer(1_000, 10_000);
        assertThat(p.intendedNanos(0)).isEqualTo(1_000);
        assertThat(p.intendedNanos(10)).isEqualTo(1_000 + 1_000_000);
    }
}
