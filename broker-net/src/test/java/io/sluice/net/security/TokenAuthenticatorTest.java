package io.sluice.net.security;

import io.sluice.core.SluiceException.InvalidConfigException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TokenAuthenticatorTest {
    private static final String TOKEN = "s3cr3t-token-0123456789";
    private final TokenAuthenticator auth = TokenAuthenticator.of(TOKEN);

    @Test
    void acceptsOnlyTheSharedToken() {
        assertThat(auth.authenticate(TOKEN)).isTrue();
        assertThat(auth.authenticate(TOKEN.getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(auth.authenticate(TOKEN + "x")).isFalse();
        assertThat(auth.authenticate(TOKEN.substring(1))).isFalse();
        assertThat(auth.authenticate("")).isFalse();
        assertThat(auth.authenticate((String) null)).isFalse();
        assertThat(auth.authenticate((byte[]) null)).isFalse();
    }

    @Test
    void readsBearerAuthorizationHeaders() {
        assertThat(auth.authenticateBearer("Bearer " + TOKEN)).isTrue();
        assertThat(auth.authenticateBearer("bearer " + TOKEN)).isTrue();
        assertThat(auth.authenticateBearer("Basic " + TOKEN)).isFalse();
        assertThat(auth.authenticateBearer(TOKEN)).isFalse();
        assertThat(auth.authenticateBearer("Bearer ")).isFalse();
        assertThat(auth.authenticateBearer(null)).isFalse();
    }

    @Test
    void neverRevealsTheToken() {
        assertThat(auth.toString()).doesNotContain(TOKEN).contains("redacted");
        assertThatThrownBy(() -> TokenAuthenticator.of("short"))
                .isInstanceOf(InvalidConfigException.class).hasMessageNotContaining("short");
        assertThatThrownBy(() -> TokenAuthenticator.of("has a space in the middle"))
                .isInstanceOf(InvalidConfigException.class).hasMessageNotContaining("middle");
    }

    @Test
    void bindingBeyondLoopbackWithoutAuthenticationIsFlagged() {
        assertThat(BindCheck.isLoopback("127.0.0.1")).isTrue();
        assertThat(BindCheck.isLoopback("::1")).isTrue();
        assertThat(BindCheck.isLoopback("0.0.0.0")).isFalse();
        assertThat(BindCheck.warnIfExposedWithoutAuth("test", "0.0.0.0", false)).isTrue();
        assertThat(BindCheck.warnIfExposedWithoutAuth("test", "0.0.0.0", true)).isFalse();
        assertThat(BindCheck.warnIfExposedWithoutAuth("test", "127.0.0.1", false)).isFalse();
    }
}
