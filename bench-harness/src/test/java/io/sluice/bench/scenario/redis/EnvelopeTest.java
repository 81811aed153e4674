package io.sluice.bench.scenario.redis;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class EnvelopeTest {
    @Test
    void theEnvelopeCarriesAOneKibAlphanumericPayloadAndItsSequenceParsesBack() {
        Envelope e = new Envelope(1024, 7);
        byte[] json = e.build("it1", 4_321);
        String text = new String(json, StandardCharsets.UTF_8);
        assertThat(text).startsWith("{\"id\":\"it1-4321\",\"messageId\":\"it1-4321\",\"sequence\":4321,\"payload\":\"")
                .contains("\"metadata\":{\"source\":\"benchmark\",\"iteration\":\"it1\",\"size\":1024,\"timestamp\":");
        String payload = text.substring(text.indexOf("\"payload\":\"") + 11, text.indexOf("\",\"metadata\""));
        assertThat(payload).hasSize(1024).matches("[A-Za-z0-9]+");
        assertThat(Envelope.sequence(json)).isEqualTo(4_321);
    }
}
