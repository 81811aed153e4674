package io.sluice.bench.scenario;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class WrkHttpLoadTest {
    private static final String REPORT = """
            Running 5s test @ http://127.0.0.1:40000/v1/topics/http/events?acks=journal
              2 threads and 16 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency   412.50us  120.00us   8.10ms   91.00%
                Req/Sec    19.00k     1.00k   22.00k    70.00%
              Latency Distribution
                 50%  390.00us
                 75%  450.00us
                 90%  520.00us
                 99%    1.20ms
              190000 requests in 5.00s, 30.00MB read
            Requests/sec:  38000.00
            Transfer/sec:      6.00MB
            """;

    @Test
    void readsRequestsAndLatenciesInMillisecondsFromWrksReport() {
        WrkHttpLoad.Result r = WrkHttpLoad.parse(REPORT);
        assertThat(r.requests()).isEqualTo(190_000);
        assertThat(r.requestsPerSec()).isCloseTo(38_000, within(0.01));
        assertThat(r.avgMs()).isCloseTo(0.4125, within(1e-9));
        assertThat(r.p50Ms()).isCloseTo(0.39, within(1e-9));
        assertThat(r.p99Ms()).isCloseTo(1.2, within(1e-9));
    }

    @Test
    void aRunWithFailedRequestsIsRefused() {
        String failed = REPORT.replace("Requests/sec", "  Non-2xx or 3xx responses: 12\nRequests/sec");
        assertThatThrownBy(() -> WrkHttpLoad.parse(failed)).hasMessageContaining("failed requests");
        String errors = REPORT.replace("Requests/sec", "  Socket errors: connect 0, read 3, write 0, timeout 0\nRequests/sec");
        assertThatThrownBy(() -> WrkHttpLoad.parse(errors)).hasMessageContaining("failed requests");
    }
}
