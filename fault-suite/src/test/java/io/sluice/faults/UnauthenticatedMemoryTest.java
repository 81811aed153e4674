package io.sluice.faults;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 11, failure 2: with a token configured, 100 connections that never authenticate each send a 16 MiB frame
 * header and 15 MiB of its body, and 20 HTTP requests without a token post gzip bombs (256 MiB inflated each),
 * against a real {@code sluice broker} process (heap ceiling 4 GiB). The broker's RSS, sampled from /proc, must grow
 * by less than 256 MiB — far below what buffering the frames (1.5 GiB) or inflating the bombs (5 GiB) would take —
 * and the broker must survive.
 */
class UnauthenticatedMemoryTest {
    @Test
    void unauthenticatedFramesAndGzipBombsCannotGrowTheBrokersMemory() throws Exception {
        Path dir = Path.of("target", "torture", "flood-" + System.currentTimeMillis()).toAbsolutePath();
        UnauthenticatedFlood.Result r = UnauthenticatedFlood.run(dir);
        System.out.println("[reliability] unauthenticated flood: " + r);
        assertThat(r.brokerAlive()).as("broker alive after the flood").isTrue();
        assertThat(r.growth()).as("RSS growth in bytes (" + r + ")").isLessThan(256L << 20);
    }
}
