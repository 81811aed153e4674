package io.sluice.testkit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The raw TCP mode of {@link FaultProxy} in front of a loopback echo server: pass, stall, cut. */
class FaultProxyTest {
    private ServerSocket echo;
    private Thread acceptor;
    private final AtomicInteger received = new AtomicInteger();

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    Thread t = new Thread(() -> {
                        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                            int b;
                            while ((b = in.read()) >= 0) {
                                received.incrementAndGet();
                                out.write(b);
                                out.flush();
                            }
                        } catch (IOException ignored) {
                            // peer gone
                        }
                    }, "echo-connection");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "echo-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stopEcho() throws Exception {
        echo.close();
        acceptor.join(5_000);
    }

    private static Socket connect(FaultProxy proxy) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", proxy.port()), 5_000);
        s.setSoTimeout(5_000);
        return s;
    }

    @Test
    void bytesPassUntilStalledAndWhatWaitedIsForwardedWhenTheStallEnds() throws Exception {
        try (FaultProxy proxy = FaultProxy.tcp("127.0.0.1", echo.getLocalPort()); Socket s = connect(proxy)) {
            s.getOutputStream().write('a');
            assertThat(s.getInputStream().read()).isEqualTo('a');

            proxy.stall(true);
            s.getOutputStream().write('b');
            s.setSoTimeout(300);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            assertThat(received.get()).as("the server saw nothing while stalled").isEqualTo(1);

            proxy.stall(false);
            s.setSoTimeout(5_000);
            assertThat(s.getInputStream().read()).isEqualTo('b');
        }
    }

    @Test
    void cutAllClosesEveryOpenConnectionAndNewOnesStillPass() throws Exception {
        try (FaultProxy proxy = FaultProxy.tcp("127.0.0.1", echo.getLocalPort())) {
            Socket first = connect(proxy);
            first.getOutputStream().write('x');
            assertThat(first.getInputStream().read()).isEqualTo('x');
            assertThat(proxy.cutAll()).isEqualTo(1);
            assertThat(first.getInputStream().read()).as("end of stream after the cut").isEqualTo(-1);
            first.close();
            try (Socket second = connect(proxy)) {
                second.getOutputStream().write('y');
                assertThat(second.getInputStream().read()).isEqualTo('y');
            }
            Await.until("the cut connection is released", Duration.ofSeconds(10), () -> proxy.openConnections() <= 1);
        }
    }

    @Test
    void delayedBytesStillArrive() throws Exception {
        try (FaultProxy proxy = FaultProxy.tcp("127.0.0.1", echo.getLocalPort()); Socket s = connect(proxy)) {
            proxy.delayAll(Duration.ofMillis(200));
            s.getOutputStream().write('d');
            assertThat(s.getInputStream().read()).isEqualTo('d');
            proxy.heal();
            s.getOutputStream().write('e');
            assertThat(s.getInputStream().read()).isEqualTo('e');
        }
    }
}
