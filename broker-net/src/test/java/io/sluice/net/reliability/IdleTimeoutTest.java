package io.sluice.net.reliability;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.net.Socket;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * <b>Promise:</b> the idle timeout closes connections that do nothing, never one whose request the broker is still
 * serving: a long-poll fetch that waits longer than the idle timeout is answered, on an open connection.
 */
class IdleTimeoutTest {
    private static final long IDLE_TIMEOUT_MILLIS = 300;
    private static final int LONG_POLL_MILLIS = 1_500;

    @TempDir
    Path dir;

    @Test
    void aLongPollLongerThanTheIdleTimeoutIsAnsweredNotCutOff() throws Exception {
        try (TestBroker broker = TestBroker.start(dir, b -> b, s -> s.idleTimeoutMillis(IDLE_TIMEOUT_MILLIS))) {
            broker.broker.createTopic(TopicConfig.of("quiet", 1));
            int port = broker.server().port();
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.setSoTimeout(20_000);
                s.getOutputStream().write(WireClient.fetchFrame(42, new TopicPartition("quiet", 0), 0, 1 << 16, LONG_POLL_MILLIS));
                DataInputStream in = new DataInputStream(s.getInputStream());
                int length = in.readInt(); // EOFException if the broker closed the connection mid-request
                byte[] frame = new byte[length];
                in.readFully(frame);
                ByteBuf response = Unpooled.wrappedBuffer(frame);
                assertThat(response.readInt()).as("correlation id").isEqualTo(42);
                assertThat(response.readShort()).as("error code").isZero();
                System.out.println("[reliability] IdleTimeoutTest long poll of " + LONG_POLL_MILLIS
                        + " ms answered with idleTimeoutMillis=" + IDLE_TIMEOUT_MILLIS);
            }
        }
    }
}
