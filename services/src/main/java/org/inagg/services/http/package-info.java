/**
 * HTTP+JSON plumbing shared by the services' control endpoints (the controller, the software switch's control port):
 * bounded request bodies, errors as {@code {"error": ...}} with a status, and a small blocking client with timeouts.
 */
package org.inagg.services.http;
