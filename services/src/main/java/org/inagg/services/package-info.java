/**
 * The long-running services of an inagg deployment, each a context validated once and a launch: the controller, the
 * per-host agent, the software switch, the shared-pool switch and the parameter server.
 */
package org.inagg.services;
