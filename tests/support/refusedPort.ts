/**
 * A loopback port nothing listens on, for checks that must fail. Below 1024, where only root may
 * bind and no test does: a port picked free and released could be taken meanwhile by another test
 * file's server running side by side, and the check would pass.
 */
export const REFUSED_PORT = 1;
