package io.sluice.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension that injects the JVM-wide {@link ClickHouseServer} and/or {@link RedisServer} into test
 * constructors, lifecycle methods and test methods. A server is started on first use only, so a test class that
 * asks for ClickHouse alone never starts Redis.
 *
 * <pre>{@code
 * @ExtendWith(ServicesExtension.class)
 * class MyTest {
 *     @Test void lands(ClickHouseServer clickHouse, RedisServer redis) { ... }
 * }
 * }</pre>
 *
 * Before each test the extension makes sure a private server that a previous test stopped is running again.
 */
public final class ServicesExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        Class<?> type = p.getParameter().getType();
        return type == ClickHouseServer.class || type == RedisServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        Class<?> type = p.getParameter().getType();
        try {
            if (type == ClickHouseServer.class) {
                ClickHouseServer ch = ClickHouseServer.shared();
                if (ch.isPrivate() && !ch.isRunning()) {
                    ch.start();
                }
                return ch;
            }
            RedisServer redis = RedisServer.shared();
            if (redis.isPrivate()) {
                redis.start();
            }
            return redis;
        } catch (RuntimeException ex) {
            throw new ParameterResolutionException("cannot provide " + type.getSimpleName() + ": " + ex.getMessage(), ex);
        }
    }
}
