package org.inagg.services.agent;

import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;

import jdk.net.UnixDomainPrincipal;

/**
 * Who may talk to the agent, judged on the peer credentials of an accepted connection ({@code SO_PEERCRED}: the
 * connecting process's effective user and group, from the kernel): the agent's own user, and the members of the group
 * the operator allowed ({@code --allow-group}) whose effective group it is. Everyone else is refused before their
 * first byte is read.
 */
final class PeerPolicy
{
    private final UserPrincipal self;
    private final GroupPrincipal allowedGroup;

    PeerPolicy(final UserPrincipal self, final GroupPrincipal allowedGroup)
    {
        this.self = self;
        this.allowedGroup = allowedGroup;
    }

    boolean allows(final UnixDomainPrincipal peer)
    {
        return self.equals(peer.user()) || allowedGroup != null && allowedGroup.equals(peer.group());
    }

    /** The peer as the refusal names it. */
    static String describe(final UnixDomainPrincipal peer)
    {
        return "user " + peer.user().getName() + ", group " + peer.group().getName();
    }

    /** Who is allowed, for the refusal's message. */
    String allowed()
    {
        return "user " + self.getName() + (allowedGroup == null ? "" : " or group " + allowedGroup.getName());
    }
}
