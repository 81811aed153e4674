package io.sluice.net.server;

import io.sluice.core.SluiceException.InvalidConfigException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pre-authentication settings: defaults, validation naming the setting, and the frame limit in force. */
class BrokerServerConfigTest {
    private static final String TOKEN = "a-token-of-some-length-0123456789";

    @Test
    void preAuthenticationSettingsHaveBoundedDefaultsAndAreValidatedNamingTheSetting() {
        BrokerServerConfig defaults = BrokerServerConfig.builder().authToken(TOKEN).build();
        assertThat(defaults.authMaxFrameBytes()).isEqualTo(8192);
        assertThat(defaults.authTimeoutMillis()).isEqualTo(10_000);
        assertThat(defaults.maxUnauthenticatedConnections()).isEqualTo(128);
        assertThat(defaults.preAuthFrameLimit()).isEqualTo(8192);
        assertThat(defaults.toString()).doesNotContain(TOKEN).contains("authMaxFrameBytes=8192");
        // never above maxFrameSize
        assertThat(BrokerServerConfig.builder().maxFrameSize(4096).build().preAuthFrameLimit()).isEqualTo(4096);

        assertThatThrownBy(() -> BrokerServerConfig.builder().authMaxFrameBytes(10).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("authMaxFrameBytes").hasMessageContaining("10");
        // the configured token must fit in an AUTHENTICATE frame under the limit: 8 + 2 + 33 = 43 bytes fit in 64,
        // 8 + 2 + 100 = 110 do not
        assertThat(BrokerServerConfig.builder().authToken(TOKEN).authMaxFrameBytes(64).build().preAuthFrameLimit()).isEqualTo(64);
        assertThatThrownBy(() -> BrokerServerConfig.builder().authToken("x".repeat(100)).authMaxFrameBytes(64).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("authMaxFrameBytes")
                .hasMessageContaining("at least 110 bytes");
        assertThatThrownBy(() -> BrokerServerConfig.builder().authTimeoutMillis(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("authTimeoutMillis");
        assertThatThrownBy(() -> BrokerServerConfig.builder().maxUnauthenticatedConnections(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("maxUnauthenticatedConnections");
    }
}
