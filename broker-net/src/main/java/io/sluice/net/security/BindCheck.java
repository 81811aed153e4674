package io.sluice.net.security;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The check every Sluice listener runs when it binds: listening beyond loopback without authentication lets
 * anyone who can reach the host read and write every topic, so it is allowed (a container needs it) but logged
 * as a warning.
 */
public final class BindCheck {
    private static final Logger LOG = LoggerFactory.getLogger(BindCheck.class);

    private BindCheck() {
    }

    /** True if {@code bindAddress} (a literal or a host name) is a loopback address. */
    public static boolean isLoopback(String bindAddress) {
        try {
            return InetAddress.getByName(bindAddress).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false; // cannot tell: treat as exposed, the bind itself will report the bad name
        }
    }

    /**
     * Logs a warning when {@code bindAddress} is not loopback and authentication is off.
     *
     * @param listener what is binding, for the message (for example {@code "HTTP"} or {@code "broker"})
     * @return true if the warning was logged
     */
    public static boolean warnIfExposedWithoutAuth(String listener, String bindAddress, boolean authenticationEnabled) {
        if (authenticationEnabled || isLoopback(bindAddress)) {
            return false;
        }
        LOG.warn("{} listener binds {} (not loopback) with authentication OFF: anyone who can reach this host can "
                + "read and write every topic. Set a token (SLUICE_AUTH_TOKEN) or bind 127.0.0.1.", listener, bindAddress);
        return true;
    }
}
