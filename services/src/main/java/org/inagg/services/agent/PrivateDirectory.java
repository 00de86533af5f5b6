package org.inagg.services.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Set;

/**
 * The agent's private directory: its socket, lock and jobs' shared-memory files live there, where no other local user
 * can read, create or replace a name. Created as {@code 0700} (owner only) or, when the operator allows a group,
 * {@code 0710} with that group (its members may reach the socket and the files, not list the directory). An existing
 * directory is used only when it is a real directory (not a link), owned by this process's user, and grants nothing
 * to others (nor to a group unless that group is the allowed one); anything else is refused naming path, owner and mode.
 * Files made in it are {@code 0600}, or {@code 0660} with the allowed group.
 */
public final class PrivateDirectory
{
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_AND_GROUP_SEARCH = PosixFilePermissions.fromString("rwx--x---");
    private static final Set<PosixFilePermission> FILE_OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> FILE_OWNER_AND_GROUP = PosixFilePermissions.fromString("rw-rw----");
    private static final Set<PosixFilePermission> GROUP_BITS = EnumSet.of(PosixFilePermission.GROUP_READ,
        PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);
    private static final Set<PosixFilePermission> OTHER_BITS = EnumSet.of(PosixFilePermission.OTHERS_READ,
        PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private final Path path;
    private final UserPrincipal owner;
    private final GroupPrincipal allowedGroup;

    private PrivateDirectory(final Path path, final UserPrincipal owner, final GroupPrincipal allowedGroup)
    {
        this.path = path;
        this.owner = owner;
        this.allowedGroup = allowedGroup;
    }

    /**
     * Creates {@code path} (its parent must exist) or checks the one there, never following a link.
     *
     * @param allowedGroup the group whose members may use the agent too, or null: this user only.
     * @throws IllegalStateException naming the path, its owner and mode when it is not private.
     */
    public static PrivateDirectory open(final Path path, final GroupPrincipal allowedGroup)
    {
        final UserPrincipal self = currentUser();
        try
        {
            try
            {
                Files.createDirectory(path, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                if (allowedGroup != null)
                {
                    final PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class,
                        LinkOption.NOFOLLOW_LINKS);
                    view.setGroup(allowedGroup);
                    view.setPermissions(OWNER_AND_GROUP_SEARCH);
                }
            }
            catch (final FileAlreadyExistsException ex)
            {
                // Checked below, whoever made it.
            }
            catch (final NoSuchFileException ex)
            {
                throw new IllegalStateException("cannot create the agent directory " + path + ": its parent "
                    + path.getParent() + " does not exist", ex);
            }
            final PosixFileAttributes attributes = Files.readAttributes(path, PosixFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS);
            final String problem = problem(attributes, self, allowedGroup);
            if (problem != null)
            {
                throw new IllegalStateException("agent directory " + path + " is not private: " + problem + " (owner "
                    + attributes.owner().getName() + ", group " + attributes.group().getName() + ", mode "
                    + PosixFilePermissions.toString(attributes.permissions()) + "); a directory of user "
                    + self.getName() + " with mode rwx------"
                    + (allowedGroup == null ? "" : " (or rwx--x--- and group " + allowedGroup.getName() + ")")
                    + " is needed: remove it, or choose another --dir");
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create or check the agent directory " + path + ": " + ex, ex);
        }
        return new PrivateDirectory(path, self, allowedGroup);
    }

    /** Why {@code attributes} are not those of a private directory of {@code self}, or null when they are. */
    static String problem(final PosixFileAttributes attributes, final UserPrincipal self,
        final GroupPrincipal allowedGroup)
    {
        if (attributes.isSymbolicLink())
        {
            return "it is a symbolic link";
        }
        if (!attributes.isDirectory())
        {
            return "it is not a directory";
        }
        if (!attributes.owner().equals(self))
        {
            return "it belongs to another user";
        }
        final Set<PosixFilePermission> permissions = attributes.permissions();
        if (permissions.stream().anyMatch(OTHER_BITS::contains))
        {
            return "other users have access";
        }
        final boolean groupAccess = permissions.stream().anyMatch(GROUP_BITS::contains);
        if (groupAccess && (allowedGroup == null || !allowedGroup.equals(attributes.group())))
        {
            return "its group has access";
        }
        return null;
    }

    /** The user this process runs as (its effective user: the owner of what it creates). */
    public static UserPrincipal currentUser()
    {
        try
        {
            return Files.getOwner(Path.of("/proc/self"));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read this process's user from /proc/self: " + ex, ex);
        }
    }

    /** This process's user id (for the default directory's name, /dev/shm/inagg-UID). */
    public static int currentUid()
    {
        try
        {
            return (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read this process's user id from /proc/self: " + ex, ex);
        }
    }

    public Path path()
    {
        return path;
    }

    public UserPrincipal owner()
    {
        return owner;
    }

    /** The group allowed besides the owner, or null. */
    public GroupPrincipal allowedGroup()
    {
        return allowedGroup;
    }

    /** The attribute files are created with: owner only (a group's rights are added by {@link #share}). */
    static FileAttribute<Set<PosixFilePermission>> fileAttribute()
    {
        return PosixFilePermissions.asFileAttribute(FILE_OWNER_ONLY);
    }

    /**
     * Gives {@code file} (made in this directory, or the socket) its final rights: {@code 0600}, or {@code 0660} and
     * the allowed group. Never follows a link.
     */
    void share(final Path file) throws IOException
    {
        final PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class,
            LinkOption.NOFOLLOW_LINKS);
        if (attributes.isSymbolicLink())
        {
            throw new IOException(file + " was replaced by a symbolic link");
        }
        // A socket (isOther): the JDK's no-follow chmod opens the file, which a socket refuses (ENXIO); chmod(2) it is,
        // on a name just checked not to be a link.
        final PosixFileAttributeView view = attributes.isOther()
            ? Files.getFileAttributeView(file, PosixFileAttributeView.class)
            : Files.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        if (allowedGroup != null)
        {
            view.setGroup(allowedGroup);
        }
        view.setPermissions(allowedGroup == null ? FILE_OWNER_ONLY : FILE_OWNER_AND_GROUP);
    }
}
