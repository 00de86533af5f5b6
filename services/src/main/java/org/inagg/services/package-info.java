/** The long-running services of an inagg deployment: the controller and the per-host agent. */
package org.inagg.services;
