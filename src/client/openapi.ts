// Generated from docs/openapi.json by openapi-typescript (`npm run openapi`). Do not edit by hand.
export interface paths {
    "/v1/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List projects, newest first */
        get: operations["listProjects"];
        put?: never;
        /** Create a project */
        post: operations["createProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a project */
        get: operations["getProject"];
        /** Update a project */
        put: operations["updateProject"];
        post?: never;
        /** Delete a project and everything under it */
        delete: operations["deleteProject"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/collaborators": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a project's collaborators, newest first (extension)
         * @description Anyone who sees the project. A private project is 404 to everyone else.
         */
        get: operations["listCollaborators"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/collaborators/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Add a collaborator or change their project role (extension)
         * @description The project's managers, admins and owners. 201 when the user was added, 200 when their role changed or already was this one. A user who is not a member of the organisation is 404.
         */
        put: operations["putCollaborator"];
        post?: never;
        /**
         * Remove a collaborator (extension)
         * @description The project's managers, admins and owners. In a private project the user's open tasks there become unassigned.
         */
        delete: operations["deleteCollaborator"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List webhook subscriptions, newest first */
        get: operations["listWebhooks"];
        put?: never;
        /** Create a webhook subscription */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a webhook subscription, never its secret (extension) */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete a webhook subscription and cancel its pending deliveries */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change a subscription's URL or events (extension)
         * @description The rules of creation apply (https, public host, at most 2,048 characters; known events). Waiting retries and later attempts go to the new URL; the secret and the history stay.
         */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/v1/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the signing secret, the previous one signing beside it for a while (extension)
         * @description The new secret (given, or generated) signs every attempt from now on; the previous one also signs (a second `v1` entry in `webhook-signature`, and `X-Service-Signature-Previous`) until `previous_expires_at`, then is forgotten. A rotation inside that window ends the older secret at once. The new secret is shown only in this response.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event to the subscription (extension)
         * @description One delivery of `event` (one of the subscription's events; default its first) whose `data` is the event's example in this document, with `X-Service-Test: true`. One attempt, never retried, not counted for health; in the history with trigger `test`. 409 while the subscription is disabled.
         */
        post: operations["sendTestWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable a disabled subscription (extension; no request body)
         * @description The subscription becomes `active` again and its failure streak is forgotten. The deliveries cancelled while it was disabled (reason `subscription_disabled`) are sent by `POST /v1/webhooks/{id}/replay-failed`. Enabling an active one changes nothing.
         */
        post: operations["enableWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a subscription's deliveries, newest first (extension)
         * @description Filters combine. `status`, `event`, `from`, `to` and `id` are the dashboard's filters. A page filtered by a status other than failed, or by an event, examines at most 5000 deliveries, so it may hold fewer than `limit` items while `next_cursor` is set: keep following it.
         */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries/{delivery_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a delivery with its attempt history (extension) */
        get: operations["getDelivery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries/{delivery_id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay a delivered or failed delivery: one new attempt, same event id and body (extension; no request body)
         * @description Queues one attempt outside the automatic schedule, signed with the subscription's current secret, and answers 202 with the delivery (now pending). Success marks it delivered, also when it had permanently failed; failure leaves it failed with no further retries. 409 while the delivery is pending or retrying, and for a cancelled one.
         */
        post: operations["replayDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/replay-failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay every permanently failed delivery since a time, as a job (extension)
         * @description Takes the subscription's failed deliveries whose event occurred at or after `since` (the oldest 10000; `more` says whether others remain) and answers 202 with the job: `count` is exactly what it replays. The delivery worker re-queues them in batches; read the job for its progress.
         */
        post: operations["replayFailedDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/replay-jobs/{job_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a bulk replay job and its progress (extension) */
        get: operations["getReplayJob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List members, invited ones included, newest first */
        get: operations["listUsers"];
        put?: never;
        /** Invite a user by e-mail (re-inviting an invited user sends a fresh link) */
        post: operations["inviteUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a user */
        get: operations["getUser"];
        /** Change a user's role */
        put: operations["updateUser"];
        post?: never;
        /**
         * Remove a member, invited or active, with their invitation, sessions and API keys (extension)
         * @description Admins and owners. Only an owner may remove an owner, and the last active owner cannot be removed (409). The removed e-mail can be invited again.
         */
        delete: operations["deleteUser"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/invitations/{token}/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Accept an invitation: the user becomes active with this name and password */
        post: operations["acceptInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/workflows": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a project's workflows, newest first (extension) */
        get: operations["listWorkflows"];
        put?: never;
        /**
         * Create a workflow in a project (extension)
         * @description A refused step is named in `details` (`steps[1].duration`). An archived project takes no new workflow (409).
         */
        post: operations["createWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a workflow with its steps (extension) */
        get: operations["getWorkflow"];
        /**
         * Replace a workflow: its name, description and steps (extension)
         * @description What GET returns can be PUT back unchanged (its read-only fields are ignored). A step keeps its `id`; a step without one is new. A change bumps `version`; runs already started keep the steps they copied. With `version`, a workflow changed since it was read is a 409.
         */
        put: operations["replaceWorkflow"];
        post?: never;
        /**
         * Delete a workflow and its finished runs (extension)
         * @description Refused (409) while a run is active: cancel it first. The tasks its runs created stay in the project.
         */
        delete: operations["deleteWorkflow"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows/{id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a workflow's runs, newest first (extension) */
        get: operations["listRuns"];
        put?: never;
        /**
         * Start a run of a workflow (extension; no request body)
         * @description The run copies the workflow's steps and is `queued` until a worker starts it. 409 for a workflow without steps, in an archived project, or over WORKFLOW_MAX_ACTIVE_RUNS. `workflow.completed` or `workflow.failed` fires when it ends.
         */
        post: operations["startRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a run with its steps and their tasks (extension) */
        get: operations["getRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel an active run (extension; no request body)
         * @description The run ends `cancelled` (`error_code: cancelled`) at once and its open task is cancelled; `workflow.failed` fires. A finished run is a 409.
         */
        post: operations["cancelRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/tasks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a project's tasks, newest first (extension) */
        get: operations["listProjectTasks"];
        put?: never;
        /**
         * Create a to-do task in a project (extension)
         * @description With `assignee_id`, `task.assigned` fires. An archived project takes no new task (409).
         */
        post: operations["createTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tasks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the organisation's tasks, newest first (extension)
         * @description `assignee_id=me&status=open` is the key user's open tasks, as "My tasks" shows them.
         */
        get: operations["listTasks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tasks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a task (extension) */
        get: operations["getTask"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change an open task: title, assignee, due date (extension)
         * @description A new assignee fires `task.assigned` exactly as "Assign" in the dashboard does. A finished task is a 409.
         */
        patch: operations["updateTask"];
        trace?: never;
    };
    "/v1/tasks/{id}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mark a to-do done (extension)
         * @description By its assignee (any role) or an admin or owner. A run's task moves its run on. A finished task is a 409; an approval is approved or rejected instead (409).
         */
        post: operations["completeTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tasks/{id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve an approval (extension)
         * @description By its assignee (any role) or an admin or owner. A run's task moves its run on to its next step. A decided task is a 409.
         */
        post: operations["approveTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tasks/{id}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reject an approval (extension)
         * @description By its assignee (any role) or an admin or owner. A run's approval rejected fails its run (`approval_rejected`). A decided task is a 409.
         */
        post: operations["rejectTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tasks/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel an open task (extension)
         * @description Member and above, or an editor or manager of the project. A run's task cancelled fails its run (`task_cancelled`). A finished task is a 409.
         */
        post: operations["cancelTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/organization": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read the key's organisation: its state and deletion date (extension) */
        get: operations["getOrganization"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the organisation's events, newest first (extension)
         * @description Every event for EVENT_RETENTION (default 30 days), whether or not a subscription listened, for reconciling missed deliveries: walk the pages until an event already processed, and de-duplicate by `id` (the `X-Service-Event-Id` of its deliveries).
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an event (extension) */
        get: operations["getEvent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit-log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the organisation's audit log, newest first (extension; admins and owners)
         * @description Every change, whatever the door (API, dashboard, CLI), with who, from where and what changed. The dashboard's filters.
         */
        get: operations["listAuditLog"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List API keys, newest first (extension)
         * @description The key user's own keys; for admins and owners, every key of the organisation. Revoked keys are not listed.
         */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key for the calling key's user (extension)
         * @description Never wider than the calling key (403), and only for its own user (403). What the new key may do is also bounded by the user's role at each request.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key (extension)
         * @description Refused from the next request on, on every instance. Admins and owners revoke any key of the organisation; others their own.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List exports, newest first (extension; admins and owners) */
        get: operations["listExports"];
        put?: never;
        /**
         * Request an export of the workspace (extension; admins and owners; no request body)
         * @description A ZIP of every collection as JSON lines, built by a worker; poll it, then download it for 7 days. 409 while another is being prepared.
         */
        post: operations["requestExport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an export (extension; admins and owners) */
        get: operations["getExport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports/{id}/download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a ready export: the dashboard's ZIP (extension; admins and owners)
         * @description 409 while it is being prepared or after it failed; 404 once expired. Each download is audited (`export.downloaded`).
         */
        get: operations["downloadExport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "project.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A project was created
         * @description Sent when a project is created, through the API or the dashboard. The service POSTs the body as `application/json` to every subscription listening for the event when it occurred. Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it). Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`. Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.
         */
        post: operations["projectCreatedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "project.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A project was updated
         * @description Sent when a project's name, description, status or visibility changes (an update that changes nothing sends no event); `data.previous` holds the old values of the fields that changed. The service POSTs the body as `application/json` to every subscription listening for the event when it occurred. Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it). Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`. Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.
         */
        post: operations["projectUpdatedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "project.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A project was deleted
         * @description Sent when a project is deleted, with its workflows, runs and tasks (no `workflow.failed` fires for runs destroyed that way). The service POSTs the body as `application/json` to every subscription listening for the event when it occurred. Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it). Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`. Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.
         */
        post: operations["projectDeletedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "workflow.completed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A workflow run completed
         * @description Sent when a workflow run completes its last step. The service POSTs the body as `application/json` to every subscription listening for the event when it occurred. Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it). Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`. Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.
         */
        post: operations["workflowCompletedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "workflow.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A workflow run failed
         * @description Sent when a workflow run ends early: an approval was rejected (`approval_rejected`), a step's task was cancelled (`task_cancelled`), or someone cancelled the run (`cancelled`). The service POSTs the body as `application/json` to every subscription listening for the event when it occurred. Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it). Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`. Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.
         */
        post: operations["workflowFailedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "task.assigned": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A task was assigned
         * @description Sent when a task gets a new assignee: created with one (alone or by a run step), or reassigned; not when the assignee is cleared or stays the same. The service POSTs the body as `application/json` to every subscription listening for the event when it occurred. Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it). Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`. Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.
         */
        post: operations["taskAssignedWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** AcceptInvitationRequest */
        AcceptInvitationRequest: {
            /** @description 1 to 255 characters (code points). */
            name: string;
            /** @description 8 to 1,024 characters (code points). */
            password: string;
        };
        /** ApiKey */
        ApiKey: {
            /** @example key_0123456789abcdefghijklmn */
            id: string;
            /** @description What the key is for; null when unnamed. */
            name: string | null;
            /** @description read, full, or a list of projects, users, webhooks, workflows, tasks, events, audit_log, api_keys, exports (each optionally :read). */
            scope: string;
            /** @description The user the key acts as. */
            user_id: string;
            /** @description The key's first 12 characters, to recognise it. */
            prefix: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description Written at most once a minute; null until first used. */
            last_used_at: string | null;
            /** @description When the key stops working (401 "API key expired"); null: never. Its user is mailed 7 days before. */
            expires_at: string | null;
        };
        /** ApiKeyList */
        ApiKeyList: {
            data: components["schemas"]["ApiKey"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** AuditEntry */
        AuditEntry: {
            /** @example aud_0123456789abcdefghijklmn */
            id: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            actor: {
                /** @enum {string} */
                type: "user" | "cli" | "system";
                /** @description The user; null for the command line and the service itself. */
                id: string | null;
                /** @description How the actor was named at the time (an e-mail). */
                label: string | null;
            };
            /** @description Past tense, `resource.verb`: `project.created`, `task.assigned`, `api_key.revoked`, ... */
            action: string;
            target: {
                type: string;
                id: string;
                /** @description How the target was named at the time. */
                label: string | null;
            } | null;
            /**
             * @description `scim`: the organisation's identity provider, through a SCIM token (the actor label is the token's name). `mcp`: an AI agent or app through the MCP server.
             * @enum {string}
             */
            source: "api" | "dashboard" | "cli" | "system" | "scim" | "mcp";
            /** @description The client address of the request that made the change. */
            ip: string | null;
            /** @description Its User-Agent. */
            user_agent: string | null;
            /** @description Its X-Request-Id. */
            request_id: string | null;
            /** @enum {string} */
            outcome: "success" | "failure";
            /** @description `{ field: { old, new } }`, with `old_label` / `new_label` naming what an id points to; null when no field changed (a deletion, a revocation). */
            changes: {
                [key: string]: {
                    old: unknown;
                    new: unknown;
                    /** @description When `old` is the id of a person, project, workflow or run: its name when the entry was written. */
                    old_label?: string;
                    /** @description The same for `new`. */
                    new_label?: string;
                };
            } | null;
        };
        /** AuditLog */
        AuditLog: {
            data: components["schemas"]["AuditEntry"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** Collaborator */
        Collaborator: {
            user: {
                /** @example user_0123456789abcdefghijklmn */
                id: string;
                /** @example dana@example.com */
                email: string;
                /** @example Dana Reyes */
                name: string | null;
            };
            role: components["schemas"]["ProjectRole"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
        };
        /** CollaboratorList */
        CollaboratorList: {
            data: components["schemas"]["Collaborator"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** CreateApiKeyRequest */
        CreateApiKeyRequest: {
            /** @description read, full, or a list of projects, users, webhooks, workflows, tasks, events, audit_log, api_keys, exports (each optionally :read); never wider than the calling key's. */
            scope: string;
            /** @description At most 255 characters, not blank; empty or null for none. */
            name?: string | null;
            /** @description Only the calling key's own user (the default). */
            user_id?: string;
            /** @description When the key stops working; null or absent: never. Must be in the future, and within the organisation's maximum API key lifetime when an owner set one (400 otherwise). */
            expires_at?: string | null;
        };
        /** CreateProjectRequest */
        CreateProjectRequest: {
            /** @description 1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible). */
            name: string;
            /** @description At most 1,000 characters; "" or null clears it. */
            description?: string | null;
            /**
             * @description Default active.
             * @enum {string}
             */
            status?: "active" | "draft";
            visibility?: components["schemas"]["ProjectVisibility"];
        };
        /** CreateTaskRequest */
        CreateTaskRequest: {
            /** @description 1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible). */
            title: string;
            /** @description At most 10,000 characters. */
            description?: string | null;
            /** @description A member of the organisation; null or "" leaves it unassigned. */
            assignee_id?: string | null;
            /** @description A time (`2026-12-31T17:00:00Z`) or a date (`2026-12-31`: the end of that day, UTC); null or "" clears it. */
            due_at?: string | null;
        };
        /** CreateWebhookRequest */
        CreateWebhookRequest: {
            /** @description Absolute https:// URL without user-info, at most 2,048 characters, on a public host. */
            url: string;
            /** @description At least one event name; duplicates are dropped. */
            events: components["schemas"]["EventType"][];
            /** @description 16 to 256 printable ASCII characters. One starting with `whsec_` must continue with base64 (it is the Standard Webhooks key). Omitted: the service generates `whsec_` + 32 random bytes in standard base64. */
            secret?: string;
            /**
             * @description Extension (CONTRACT 14): attempts started to this subscription in any one-second window, across every worker; the rest wait their turn (not failed, not counted as attempts). null: no limit.
             * @example 50
             */
            rate_limit?: number | null;
            /**
             * @description Extension (CONTRACT 14): `fifo` sends one attempt at a time, in the order the events were committed; a failing delivery holds the later ones through its retries. Replays and test events stand outside the order.
             * @enum {string}
             */
            ordering?: "none" | "fifo";
        };
        /** CreateWorkflowRequest */
        CreateWorkflowRequest: {
            /** @description 1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible). */
            name: string;
            /** @description At most 10,000 characters; "" or null clears it. */
            description?: string | null;
            /** @description In order; at most 20 (WORKFLOW_MAX_STEPS may lower it). */
            steps?: components["schemas"]["WorkflowStepInput"][];
        };
        /** CreatedApiKey */
        CreatedApiKey: {
            /** @example key_0123456789abcdefghijklmn */
            id: string;
            /** @description What the key is for; null when unnamed. */
            name: string | null;
            /** @description read, full, or a list of projects, users, webhooks, workflows, tasks, events, audit_log, api_keys, exports (each optionally :read). */
            scope: string;
            /** @description The user the key acts as. */
            user_id: string;
            /** @description The key's first 12 characters, to recognise it. */
            prefix: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description Written at most once a minute; null until first used. */
            last_used_at: string | null;
            /** @description When the key stops working (401 "API key expired"); null: never. Its user is mailed 7 days before. */
            expires_at: string | null;
            /** @description The secret (`wsk_...`): shown in this answer only, stored as a hash. */
            key: string;
        };
        /** CreatedWebhook */
        CreatedWebhook: {
            /** @example wh_0123456789abcdefghijklmn */
            id: string;
            /**
             * @description The endpoint. To members and viewers each query value and any user part read "•••" (`?token=•••`): receivers often authenticate with them. Admins and owners see it whole.
             * @example https://hooks.example.com/workspace
             */
            url: string;
            events: components["schemas"]["EventType"][];
            /**
             * @description The signing secret; returned only here, never again.
             * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=
             */
            secret: string;
            /** @description true exactly when `status` is `active`. */
            active: boolean;
            /**
             * @description The same state as `active`, for clients of either documented shape. `disabled`: the service stopped sending to it (CONTRACT 11); `POST /v1/webhooks/{id}/enable` brings it back.
             * @enum {string}
             */
            status: "active" | "disabled";
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description Extension: start of the current failure streak (every attempt since failed); null while healthy. */
            failing_since: string | null;
            /** @description Extension: when the service disabled the subscription; null while active. */
            disabled_at: string | null;
            /** @description Extension: `failing` (every attempt failed for WEBHOOK_DISABLE_AFTER) or `gone` (the endpoint answered 410 Gone); null while active. */
            disabled_reason: "failing" | "gone" | null;
            /** @description Extension: until when a rotated-out secret still signs beside the current one; null when none does. */
            previous_secret_expires_at: string | null;
            /**
             * @description Extension (CONTRACT 14): attempts started to this subscription in any one-second window, across every worker; the rest wait their turn (not failed, not counted as attempts). null: no limit.
             * @example 50
             */
            rate_limit: number | null;
            /**
             * @description Extension (CONTRACT 14): `fifo` sends one attempt at a time, in the order the events were committed; a failing delivery holds the later ones through its retries. Replays and test events stand outside the order.
             * @enum {string}
             */
            ordering: "none" | "fifo";
        };
        /** Delivery */
        Delivery: {
            /** @example dlv_0123456789abcdefghijklmn */
            id: string;
            /** @description X-Service-Event-Id: the same on every attempt and replay. */
            event_id: string;
            event_type: components["schemas"]["EventType"];
            webhook_id: string;
            status: components["schemas"]["DeliveryStatus"];
            /** @description Attempts made so far, automatic and replayed. */
            attempts: number;
            /** @description When a pending or retrying delivery is next attempted. */
            next_attempt_at: string | null;
            last_status_code: number | null;
            last_error: string | null;
            /** @description When the latest attempt started; null before the first. */
            last_attempt_at: string | null;
            /** @description A replay attempt was made or is queued. */
            replayed: boolean;
            /** @description A test event sent with POST /v1/webhooks/{id}/test: one attempt, not counted for health. */
            test: boolean;
            /** @description Why a cancelled delivery was cancelled; null for the other states. `subscription_disabled` ones are sent again by replay-failed once the subscription is enabled. */
            cancel_reason: "subscription_disabled" | "subscription_deleted" | null;
            /** @description Extension (CONTRACT 14): why a pending delivery is not on the wire yet. `order`: earlier deliveries of its ordered (fifo) subscription go first; `rate_limit`: it is due and waits for a free start under the subscription's rate_limit. null otherwise. */
            waiting: "order" | "rate_limit" | null;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /** DeliveryAttempt */
        DeliveryAttempt: {
            /** @example att_0123456789abcdefghijklmn */
            id: string;
            /** @description X-Service-Delivery-Attempt of this attempt. */
            attempt_number: number;
            /** @enum {string} */
            trigger: "automatic" | "replay" | "test";
            /** @enum {string} */
            outcome: "success" | "failure";
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            started_at: string;
            duration_ms: number;
            request_headers: {
                [key: string]: string;
            };
            response_status: number | null;
            response_headers: {
                [key: string]: string;
            } | null;
            /** @description The first 64 KiB of the response body. */
            response_body: string | null;
            /** @description Why the attempt failed: HTTP status, network, TLS, timeout or SSRF refusal. */
            error: string | null;
            /** @description Extension (CONTRACT 14): why this attempt started later than it was due (`rate_limit`), or after earlier deliveries of its order (`order`); null when it was not held. */
            held_reason: "order" | "rate_limit" | null;
            /** @description How long it was held, in milliseconds; null when it was not. */
            held_ms: number | null;
        };
        /** DeliveryDetail */
        DeliveryDetail: {
            /** @example dlv_0123456789abcdefghijklmn */
            id: string;
            /** @description X-Service-Event-Id: the same on every attempt and replay. */
            event_id: string;
            event_type: components["schemas"]["EventType"];
            webhook_id: string;
            status: components["schemas"]["DeliveryStatus"];
            /** @description Attempts made so far, automatic and replayed. */
            attempts: number;
            /** @description When a pending or retrying delivery is next attempted. */
            next_attempt_at: string | null;
            last_status_code: number | null;
            last_error: string | null;
            /** @description When the latest attempt started; null before the first. */
            last_attempt_at: string | null;
            /** @description A replay attempt was made or is queued. */
            replayed: boolean;
            /** @description A test event sent with POST /v1/webhooks/{id}/test: one attempt, not counted for health. */
            test: boolean;
            /** @description Why a cancelled delivery was cancelled; null for the other states. `subscription_disabled` ones are sent again by replay-failed once the subscription is enabled. */
            cancel_reason: "subscription_disabled" | "subscription_deleted" | null;
            /** @description Extension (CONTRACT 14): why a pending delivery is not on the wire yet. `order`: earlier deliveries of its ordered (fifo) subscription go first; `rate_limit`: it is due and waits for a free start under the subscription's rate_limit. null otherwise. */
            waiting: "order" | "rate_limit" | null;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
            /** @description The exact request body sent on every attempt. */
            payload: string;
            attempt_history: components["schemas"]["DeliveryAttempt"][];
        };
        /** DeliveryList */
        DeliveryList: {
            data: components["schemas"]["Delivery"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /**
         * DeliveryStatus
         * @description delivered; retrying: failed at least once and waits for its next automatic attempt (next_attempt_at); pending: waits for its first attempt, or for a replay; failed: permanently failed (schedule used up, or a replay failed); cancelled: its subscription was deleted, or was disabled, before it was sent (see cancel_reason).
         * @enum {string}
         */
        DeliveryStatus: "delivered" | "retrying" | "pending" | "failed" | "cancelled";
        /** EmptyRequest */
        EmptyRequest: Record<string, never>;
        /**
         * Error
         * @description Every error has this shape (CONTRACT 1).
         */
        Error: {
            error: {
                code: string;
                message: string;
                details?: {
                    field: string;
                    message: string;
                }[];
            };
        };
        /** Event */
        Event: {
            /**
             * @description The `X-Service-Event-Id` (and `webhook-id`) its deliveries carry.
             * @example evt_0123456789abcdefghijklmn
             */
            id: string;
            /** @enum {string} */
            type: "project.created" | "project.updated" | "project.deleted" | "workflow.completed" | "workflow.failed" | "task.assigned";
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description Byte for byte the `data` of the webhook body its deliveries send (see the webhooks of this document). */
            data: {
                [key: string]: unknown;
            };
        };
        /** EventList */
        EventList: {
            data: components["schemas"]["Event"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /**
         * EventType
         * @enum {string}
         */
        EventType: "project.created" | "project.updated" | "project.deleted" | "workflow.completed" | "workflow.failed" | "task.assigned";
        /** Export */
        Export: {
            /** @example exp_0123456789abcdefghijklmn */
            id: string;
            /**
             * @description `pending` until a worker takes it, `building`, then `ready` (download it) or `failed`; `expired` 7 days after it was ready.
             * @enum {string}
             */
            status: "pending" | "building" | "ready" | "failed" | "expired";
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description When it became ready. */
            ready_at: string | null;
            /** @description Until when it can be downloaded. */
            expires_at: string | null;
            /** @description The ZIP's size once ready. */
            size_bytes: number | null;
        };
        /** ExportList */
        ExportList: {
            data: components["schemas"]["Export"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** InviteUserRequest */
        InviteUserRequest: {
            /**
             * Format: email
             * @description local@domain, the domain with at least one dot; matched case-insensitively.
             */
            email: string;
            role: components["schemas"]["Role"];
        };
        /** Organization */
        Organization: {
            /** @example org_0123456789abcdefghijklmn */
            id: string;
            name: string;
            /**
             * @description `read_only` once the subscription is cancelled: every change is refused with 403 `workspace_read_only` until it is resumed.
             * @enum {string}
             */
            state: "active" | "read_only";
            /** @description When the organisation and all its data will be deleted; null while active. */
            deletion_at: string | null;
            /** @description Since when an owner requires two-step verification (an authenticator app or a passkey) of every member, set on the dashboard's organisation security settings; null when it is not required. Members without one have 7 days; API keys are not affected. */
            two_step_required_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
        };
        /** Project */
        Project: {
            /** @example proj_0123456789abcdefghijklmn */
            id: string;
            name: string;
            description: string | null;
            status: components["schemas"]["ProjectStatus"];
            visibility: components["schemas"]["ProjectVisibility"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /**
         * ProjectCreatedEvent
         * @description Sent when a project is created (POST /v1/projects or the dashboard).
         * @example {
         *       "event": "project.created",
         *       "timestamp": "2026-11-22T09:30:00.000Z",
         *       "data": {
         *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
         *         "name": "Website relaunch",
         *         "description": "New site for the spring campaign",
         *         "status": "active",
         *         "visibility": "organization",
         *         "created_at": "2026-11-22T09:30:00.000Z",
         *         "updated_at": "2026-11-22T09:30:00.000Z"
         *       }
         *     }
         */
        ProjectCreatedEvent: {
            /**
             * @description The event name; the same as the X-Service-Event header.
             * @constant
             */
            event: "project.created";
            /**
             * Format: date-time
             * @description When the event occurred (UTC, millisecond precision); the same on every attempt.
             * @example 2026-11-22T09:30:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["ProjectEventData"];
        };
        /**
         * ProjectDeletedEvent
         * @description Sent when a project is deleted, with its workflows, runs and tasks (no workflow.failed fires for those runs).
         * @example {
         *       "event": "project.deleted",
         *       "timestamp": "2026-11-24T08:00:00.000Z",
         *       "data": {
         *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
         *         "name": "Website relaunch",
         *         "status": "archived"
         *       }
         *     }
         */
        ProjectDeletedEvent: {
            /**
             * @description The event name; the same as the X-Service-Event header.
             * @constant
             */
            event: "project.deleted";
            /**
             * Format: date-time
             * @description When the event occurred (UTC, millisecond precision); the same on every attempt.
             * @example 2026-11-22T09:30:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["ProjectDeletedEventData"];
        };
        /**
         * ProjectDeletedEventData
         * @description The project that was deleted, as it was.
         */
        ProjectDeletedEventData: {
            /**
             * @description The deleted project.
             * @example proj_0123456789abcdefghijklmn
             */
            project_id: string;
            /** @description Its name when it was deleted. */
            name: string;
            /** @description The project status: active, archived or draft. */
            status: "active" | "archived" | "draft";
        };
        /**
         * ProjectEventData
         * @description The project as it stands after the change.
         */
        ProjectEventData: {
            /**
             * @description The project.
             * @example proj_0123456789abcdefghijklmn
             */
            project_id: string;
            /** @description The project name. */
            name: string;
            /** @description The project description; null when it has none. */
            description: string | null;
            /** @description The project status: active, archived or draft. */
            status: "active" | "archived" | "draft";
            /** @description Who sees the project: organization (every member) or private (its collaborators, admins and owners). */
            visibility: "organization" | "private";
            /**
             * Format: date-time
             * @description When the project was created.
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description When the project was last changed (for project.updated: this change).
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /** ProjectList */
        ProjectList: {
            data: components["schemas"]["ProjectListItem"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** ProjectListItem */
        ProjectListItem: {
            id: string;
            name: string;
            status: components["schemas"]["ProjectStatus"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
        };
        /**
         * ProjectPreviousValues
         * @description The old values of exactly the fields that changed; a field that did not change is absent.
         */
        ProjectPreviousValues: {
            /** @description The name before the change. */
            name?: string;
            /** @description The description before the change. */
            description?: string | null;
            /** @description The project status: active, archived or draft. */
            status?: "active" | "archived" | "draft";
            /** @description Who sees the project: organization (every member) or private (its collaborators, admins and owners). */
            visibility?: "organization" | "private";
        };
        /**
         * ProjectRole
         * @description `viewer` reads; `editor` also changes the project and its workflows, runs and tasks; `manager` also changes visibility and collaborators and deletes the project.
         * @enum {string}
         */
        ProjectRole: "viewer" | "editor" | "manager";
        /**
         * ProjectStatus
         * @enum {string}
         */
        ProjectStatus: "active" | "archived" | "draft";
        /**
         * ProjectUpdatedEvent
         * @description Sent when a project's name, description, status or visibility changes. An update that changes nothing sends no event.
         * @example {
         *       "event": "project.updated",
         *       "timestamp": "2026-11-23T14:05:12.345Z",
         *       "data": {
         *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
         *         "name": "Website relaunch",
         *         "description": "New site for the spring campaign",
         *         "status": "archived",
         *         "visibility": "organization",
         *         "created_at": "2026-11-22T09:30:00.000Z",
         *         "updated_at": "2026-11-23T14:05:12.345Z",
         *         "previous": {
         *           "status": "active"
         *         }
         *       }
         *     }
         */
        ProjectUpdatedEvent: {
            /**
             * @description The event name; the same as the X-Service-Event header.
             * @constant
             */
            event: "project.updated";
            /**
             * Format: date-time
             * @description When the event occurred (UTC, millisecond precision); the same on every attempt.
             * @example 2026-11-22T09:30:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["ProjectUpdatedEventData"];
        };
        /**
         * ProjectUpdatedEventData
         * @description The project after the change, and `previous`: what the changed fields held before.
         */
        ProjectUpdatedEventData: {
            /**
             * @description The project.
             * @example proj_0123456789abcdefghijklmn
             */
            project_id: string;
            /** @description The project name. */
            name: string;
            /** @description The project description; null when it has none. */
            description: string | null;
            /** @description The project status: active, archived or draft. */
            status: "active" | "archived" | "draft";
            /** @description Who sees the project: organization (every member) or private (its collaborators, admins and owners). */
            visibility: "organization" | "private";
            /**
             * Format: date-time
             * @description When the project was created.
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description When the project was last changed (for project.updated: this change).
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
            previous: components["schemas"]["ProjectPreviousValues"];
        };
        /**
         * ProjectVisibility
         * @description `organization`: every member sees the project; `private`: only its collaborators, admins and owners.
         * @enum {string}
         */
        ProjectVisibility: "organization" | "private";
        /** PutCollaboratorRequest */
        PutCollaboratorRequest: {
            role: components["schemas"]["ProjectRole"];
        };
        /**
         * ReplaceWorkflowRequest
         * @description The whole workflow: what GET returns, changed where it should change.
         */
        ReplaceWorkflowRequest: {
            /** @description 1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible). */
            name: string;
            /** @description At most 10,000 characters; "" or null clears it. */
            description?: string | null;
            /** @description In order; at most 20 (WORKFLOW_MAX_STEPS may lower it). */
            steps: components["schemas"]["WorkflowStepInput"][];
            /** @description The version read: when the workflow has changed since, the PUT is a 409 rather than a lost update. */
            version?: number;
            /** @description Read-only; ignored. */
            id?: string;
            /** @description Read-only; ignored. */
            project_id?: string;
            /** @description Read-only; ignored. */
            created_at?: string;
            /** @description Read-only; ignored. */
            updated_at?: string;
        };
        /** ReplayFailedRequest */
        ReplayFailedRequest: {
            /**
             * Format: date-time
             * @description Replay failed deliveries whose event occurred at or after this time.
             */
            since: string;
        };
        /** ReplayJob */
        ReplayJob: {
            /** @example rpl_0123456789abcdefghijklmn */
            id: string;
            webhook_id: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            since: string;
            /**
             * @description running while deliveries are being re-queued.
             * @enum {string}
             */
            status: "running" | "done";
            /** @description The failed deliveries the job took (the oldest, at most 10000): exactly what it replays. */
            count: number;
            /** @description More failed deliveries matched than one job takes; ask again for the next ones. */
            more: boolean;
            /** @description Re-queued so far. */
            queued: number;
            /** @description No longer failed when their turn came (replayed one by one meanwhile). */
            skipped: number;
            /** @description Re-queued deliveries now delivered. */
            delivered: number;
            /** @description Re-queued deliveries whose replay failed. */
            failed: number;
            /** @description Re-queued deliveries still waiting for their replay attempt. */
            pending: number;
            requested_by: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            finished_at: string | null;
        };
        /**
         * Role
         * @description owner, admin, member or viewer.
         * @enum {string}
         */
        Role: "owner" | "admin" | "member" | "viewer";
        /** RotateSecretRequest */
        RotateSecretRequest: {
            /** @description 16 to 256 printable ASCII characters. One starting with `whsec_` must continue with base64 (it is the Standard Webhooks key). Omitted: the service generates `whsec_` + 32 random bytes in standard base64. */
            secret?: string;
            /**
             * @description Seconds the previous secret keeps signing beside the new one (0 to 604800; default 86400: a day).
             * @default 86400
             */
            previous_expires_in: number;
        };
        /** RotatedSecret */
        RotatedSecret: {
            /**
             * @description The new signing secret: shown only here, never again.
             * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=
             */
            secret: string;
            /**
             * Format: date-time
             * @description When the previous secret stops signing (now, for a window of 0).
             * @example 2026-11-23T09:30:00.000Z
             */
            previous_expires_at: string;
        };
        /** Run */
        Run: {
            /** @example run_0123456789abcdefghijklmn */
            id: string;
            workflow_id: string;
            project_id: string;
            /** @description The workflow version the run copied its steps from. */
            workflow_version: number;
            /** @description The run's number within its workflow: 1, 2, 3… in the order runs started ("Run #3"). 0 only for a run started by an older release during an upgrade. */
            number: number;
            status: components["schemas"]["RunStatus"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description null while queued. */
            started_at: string | null;
            /** @description null while the run is active. */
            finished_at: string | null;
            /** @description Why the run failed, in words; null otherwise. */
            error: string | null;
            /** @description Why a failed or cancelled run ended; null otherwise. */
            error_code: "approval_rejected" | "task_cancelled" | "cancelled" | null;
            steps: components["schemas"]["RunStep"][];
        };
        /** RunList */
        RunList: {
            data: components["schemas"]["RunListItem"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /**
         * RunListItem
         * @description A run without its steps: read one run for them.
         */
        RunListItem: {
            /** @example run_0123456789abcdefghijklmn */
            id: string;
            workflow_id: string;
            project_id: string;
            /** @description The workflow version the run copied its steps from. */
            workflow_version: number;
            /** @description The run's number within its workflow: 1, 2, 3… in the order runs started ("Run #3"). 0 only for a run started by an older release during an upgrade. */
            number: number;
            status: components["schemas"]["RunStatus"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description null while queued. */
            started_at: string | null;
            /** @description null while the run is active. */
            finished_at: string | null;
            /** @description Why the run failed, in words; null otherwise. */
            error: string | null;
            /** @description Why a failed or cancelled run ended; null otherwise. */
            error_code: "approval_rejected" | "task_cancelled" | "cancelled" | null;
        };
        /**
         * RunStatus
         * @enum {string}
         */
        RunStatus: "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled";
        /** RunStep */
        RunStep: {
            /** @description The step's place in the run, from 0. */
            position: number;
            /** @description The workflow step it was copied from. */
            step_id: string;
            type: components["schemas"]["StepType"];
            /** @description The step's title. */
            title: string | null;
            /** @enum {string} */
            status: "pending" | "waiting" | "completed" | "failed";
            /** @description The task a task or approval step created, once started. */
            task_id: string | null;
            /** @description null until the step starts. */
            started_at: string | null;
            /** @description null until the step ends. */
            finished_at: string | null;
        };
        /**
         * StepType
         * @description `task` (a to-do for a person), `approval` (approve or reject) or `wait` (a timer).
         * @enum {string}
         */
        StepType: "task" | "approval" | "wait";
        /** Task */
        Task: {
            /** @example task_0123456789abcdefghijklmn */
            id: string;
            project_id: string;
            /**
             * @description `todo` is marked done; `approval` is approved or rejected.
             * @enum {string}
             */
            kind: "todo" | "approval";
            title: string;
            /** @description null when it has none. */
            description: string | null;
            status: components["schemas"]["TaskStatus"];
            /**
             * @description An approval's decision once made; null otherwise.
             * @enum {string|null}
             */
            decision: "approved" | "rejected" | null;
            /** @description The member it is assigned to; null when unassigned. */
            assignee_id: string | null;
            /**
             * Format: date-time
             * @description When it is due; null when it has no due date.
             * @example 2026-11-22T09:30:00.000Z
             */
            due_at: string | null;
            /** @description The workflow whose run created it; null for a task created on its own. */
            workflow_id: string | null;
            /** @description The run that created it; null for a task created on its own. */
            run_id: string | null;
            /** @description Who finished it (a user id); null while open, or when the operator did. */
            completed_by: string | null;
            /**
             * Format: date-time
             * @description When it was finished; null while open.
             * @example 2026-11-22T09:30:00.000Z
             */
            completed_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /**
         * TaskAssignedEvent
         * @description Sent when a task is assigned to a user, or reassigned to another (not when the assignee is cleared or stays the same).
         * @example {
         *       "event": "task.assigned",
         *       "timestamp": "2026-11-22T10:00:00.500Z",
         *       "data": {
         *         "task_id": "task_9c1v5b7n3m0q8w2e6r4t1y5u",
         *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
         *         "title": "Review the copy",
         *         "assignee_id": "user_3h8j2k6l0z4x9c1v7b5n3m8q",
         *         "previous_assignee_id": null,
         *         "assigned_by": null,
         *         "workflow_id": "wf_7t3y8u1i5o9p2a6s4d0f3g7h",
         *         "run_id": "run_2j6k0l4z8x1c5v9b3n7m2q6w",
         *         "due_at": "2026-11-25T10:00:00.500Z"
         *       }
         *     }
         */
        TaskAssignedEvent: {
            /**
             * @description The event name; the same as the X-Service-Event header.
             * @constant
             */
            event: "task.assigned";
            /**
             * Format: date-time
             * @description When the event occurred (UTC, millisecond precision); the same on every attempt.
             * @example 2026-11-22T09:30:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["TaskAssignedEventData"];
        };
        /**
         * TaskAssignedEventData
         * @description A task that was assigned or reassigned to a user.
         */
        TaskAssignedEventData: {
            /**
             * @description The task.
             * @example task_0123456789abcdefghijklmn
             */
            task_id: string;
            /**
             * @description The task's project.
             * @example proj_0123456789abcdefghijklmn
             */
            project_id: string;
            /** @description The task title. */
            title: string;
            /**
             * @description The user the task is now assigned to.
             * @example user_0123456789abcdefghijklmn
             */
            assignee_id: string;
            /** @description Who had it before; null for a first assignment. */
            previous_assignee_id: string | null;
            /** @description The user who assigned it; null when the service did (a run starting a step) or the command line. */
            assigned_by: string | null;
            /** @description The workflow whose run created the task; null for a task created on its own. */
            workflow_id: string | null;
            /** @description The run that created the task; null for a task created on its own. */
            run_id: string | null;
            /**
             * @description When the task is due; null when it has no due date.
             * @example 2026-11-22T09:30:00.000Z
             */
            due_at: string | null;
        };
        /** TaskList */
        TaskList: {
            data: components["schemas"]["TaskListItem"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** TaskListItem */
        TaskListItem: {
            /** @example task_0123456789abcdefghijklmn */
            id: string;
            project_id: string;
            /**
             * @description `todo` is marked done; `approval` is approved or rejected.
             * @enum {string}
             */
            kind: "todo" | "approval";
            title: string;
            status: components["schemas"]["TaskStatus"];
            /**
             * @description An approval's decision once made; null otherwise.
             * @enum {string|null}
             */
            decision: "approved" | "rejected" | null;
            /** @description The member it is assigned to; null when unassigned. */
            assignee_id: string | null;
            /**
             * Format: date-time
             * @description When it is due; null when it has no due date.
             * @example 2026-11-22T09:30:00.000Z
             */
            due_at: string | null;
            /** @description The workflow whose run created it; null for a task created on its own. */
            workflow_id: string | null;
            /** @description The run that created it; null for a task created on its own. */
            run_id: string | null;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /** TaskReasonRequest */
        TaskReasonRequest: {
            /** @description At most 10,000 characters; kept in the audit log (and, for a run's task, in the run's error). */
            reason?: string | null;
        };
        /**
         * TaskStatus
         * @enum {string}
         */
        TaskStatus: "open" | "done" | "cancelled";
        /** TestEventAccepted */
        TestEventAccepted: {
            /**
             * @description The test delivery, in the history with trigger `test`.
             * @example dlv_0123456789abcdefghijklmn
             */
            delivery_id: string;
        };
        /** TestEventRequest */
        TestEventRequest: {
            /**
             * @description One of the subscription's events; default its first.
             * @enum {string}
             */
            event?: "project.created" | "project.updated" | "project.deleted" | "workflow.completed" | "workflow.failed" | "task.assigned";
        };
        /**
         * UpdateProjectRequest
         * @description Only the fields given change. Changing `visibility` needs the project's manager role, an admin or an owner.
         */
        UpdateProjectRequest: {
            /** @description 1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible). */
            name?: string;
            /** @description At most 1,000 characters; "" or null clears it. */
            description?: string | null;
            status?: components["schemas"]["ProjectStatus"];
            visibility?: components["schemas"]["ProjectVisibility"];
        };
        /**
         * UpdateTaskRequest
         * @description Only the fields given change. A new assignee fires `task.assigned`.
         */
        UpdateTaskRequest: {
            /** @description 1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible). */
            title?: string;
            /** @description A member of the organisation; null or "" leaves it unassigned. */
            assignee_id?: string | null;
            /** @description A time (`2026-12-31T17:00:00Z`) or a date (`2026-12-31`: the end of that day, UTC); null or "" clears it. */
            due_at?: string | null;
        };
        /**
         * UpdateUserRequest
         * @description Role is the only field that can change.
         */
        UpdateUserRequest: {
            role: components["schemas"]["Role"];
        };
        /**
         * UpdateWebhookRequest
         * @description The fields to change (at least one), with the rules of creation. Waiting and later attempts go to the new URL.
         */
        UpdateWebhookRequest: {
            /** @description Absolute https:// URL without user-info, at most 2,048 characters, on a public host. */
            url?: string;
            /** @description At least one event name; duplicates are dropped. */
            events?: components["schemas"]["EventType"][];
            /**
             * @description Extension (CONTRACT 14): attempts started to this subscription in any one-second window, across every worker; the rest wait their turn (not failed, not counted as attempts). null: no limit.
             * @example 50
             */
            rate_limit?: number | null;
            /**
             * @description Extension (CONTRACT 14): `fifo` sends one attempt at a time, in the order the events were committed; a failing delivery holds the later ones through its retries. Replays and test events stand outside the order.
             * @enum {string}
             */
            ordering?: "none" | "fifo";
        };
        /** User */
        User: {
            /** @example user_0123456789abcdefghijklmn */
            id: string;
            email: string;
            /** @description null while the user is invited. */
            name: string | null;
            role: components["schemas"]["Role"];
            status: components["schemas"]["UserStatus"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /** UserList */
        UserList: {
            data: components["schemas"]["UserListItem"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** UserListItem */
        UserListItem: {
            id: string;
            email: string;
            /** @description null while the user is invited. */
            name: string | null;
            role: components["schemas"]["Role"];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
        };
        /**
         * UserStatus
         * @description `suspended`: deprovisioned by the identity provider (SCIM `active: false`); cannot sign in, keys refused.
         * @enum {string}
         */
        UserStatus: "invited" | "active" | "suspended";
        /** Webhook */
        Webhook: {
            /** @example wh_0123456789abcdefghijklmn */
            id: string;
            /**
             * @description The endpoint. To members and viewers each query value and any user part read "•••" (`?token=•••`): receivers often authenticate with them. Admins and owners see it whole.
             * @example https://hooks.example.com/workspace
             */
            url: string;
            events: components["schemas"]["EventType"][];
            /** @description true exactly when `status` is `active`. */
            active: boolean;
            /**
             * @description The same state as `active`, for clients of either documented shape. `disabled`: the service stopped sending to it (CONTRACT 11); `POST /v1/webhooks/{id}/enable` brings it back.
             * @enum {string}
             */
            status: "active" | "disabled";
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /** @description Extension: start of the current failure streak (every attempt since failed); null while healthy. */
            failing_since: string | null;
            /** @description Extension: when the service disabled the subscription; null while active. */
            disabled_at: string | null;
            /** @description Extension: `failing` (every attempt failed for WEBHOOK_DISABLE_AFTER) or `gone` (the endpoint answered 410 Gone); null while active. */
            disabled_reason: "failing" | "gone" | null;
            /** @description Extension: until when a rotated-out secret still signs beside the current one; null when none does. */
            previous_secret_expires_at: string | null;
            /**
             * @description Extension (CONTRACT 14): attempts started to this subscription in any one-second window, across every worker; the rest wait their turn (not failed, not counted as attempts). null: no limit.
             * @example 50
             */
            rate_limit: number | null;
            /**
             * @description Extension (CONTRACT 14): `fifo` sends one attempt at a time, in the order the events were committed; a failing delivery holds the later ones through its retries. Replays and test events stand outside the order.
             * @enum {string}
             */
            ordering: "none" | "fifo";
        };
        /** WebhookList */
        WebhookList: {
            data: components["schemas"]["Webhook"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** Workflow */
        Workflow: {
            /** @example wf_0123456789abcdefghijklmn */
            id: string;
            project_id: string;
            name: string;
            /** @description null when it has none. */
            description: string | null;
            /** @description Goes up by one with every change; a run records the version it copied. */
            version: number;
            steps: components["schemas"]["WorkflowStep"][];
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-22T09:30:00.000Z
             */
            updated_at: string;
        };
        /**
         * WorkflowCompletedEvent
         * @description Sent when a workflow run completes its last step.
         * @example {
         *       "event": "workflow.completed",
         *       "timestamp": "2026-11-22T11:42:07.120Z",
         *       "data": {
         *         "workflow_id": "wf_7t3y8u1i5o9p2a6s4d0f3g7h",
         *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
         *         "run_id": "run_2j6k0l4z8x1c5v9b3n7m2q6w",
         *         "status": "completed",
         *         "started_at": "2026-11-22T10:00:00.500Z",
         *         "finished_at": "2026-11-22T11:42:07.120Z"
         *       }
         *     }
         */
        WorkflowCompletedEvent: {
            /**
             * @description The event name; the same as the X-Service-Event header.
             * @constant
             */
            event: "workflow.completed";
            /**
             * Format: date-time
             * @description When the event occurred (UTC, millisecond precision); the same on every attempt.
             * @example 2026-11-22T09:30:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["WorkflowCompletedEventData"];
        };
        /**
         * WorkflowCompletedEventData
         * @description A run that completed its last step.
         */
        WorkflowCompletedEventData: {
            /**
             * @description The workflow the run belongs to.
             * @example wf_0123456789abcdefghijklmn
             */
            workflow_id: string;
            /**
             * @description The workflow's project.
             * @example proj_0123456789abcdefghijklmn
             */
            project_id: string;
            /**
             * @description The run that ended.
             * @example run_0123456789abcdefghijklmn
             */
            run_id: string;
            /** @constant */
            status: "completed";
            /**
             * @description When the run started its first step.
             * @example 2026-11-22T09:30:00.000Z
             */
            started_at: string | null;
            /**
             * Format: date-time
             * @description When the run completed.
             * @example 2026-11-22T09:30:00.000Z
             */
            finished_at: string;
        };
        /**
         * WorkflowErrorCode
         * @description Why the run failed: an approval was rejected, a step's task was cancelled, or someone cancelled the run ("Cancel run").
         */
        WorkflowErrorCode: "approval_rejected" | "task_cancelled" | "cancelled";
        /**
         * WorkflowFailedEvent
         * @description Sent when a workflow run ends early: an approval rejected, a step's task cancelled, or the run cancelled.
         * @example {
         *       "event": "workflow.failed",
         *       "timestamp": "2026-11-22T10:15:30.000Z",
         *       "data": {
         *         "workflow_id": "wf_7t3y8u1i5o9p2a6s4d0f3g7h",
         *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
         *         "run_id": "run_2j6k0l4z8x1c5v9b3n7m2q6w",
         *         "status": "failed",
         *         "started_at": "2026-11-22T10:00:00.500Z",
         *         "finished_at": "2026-11-22T10:15:30.000Z",
         *         "error": "Approval \"Sign off\" was rejected by Olive Owner: the copy is not final",
         *         "error_code": "approval_rejected"
         *       }
         *     }
         */
        WorkflowFailedEvent: {
            /**
             * @description The event name; the same as the X-Service-Event header.
             * @constant
             */
            event: "workflow.failed";
            /**
             * Format: date-time
             * @description When the event occurred (UTC, millisecond precision); the same on every attempt.
             * @example 2026-11-22T09:30:00.000Z
             */
            timestamp: string;
            data: components["schemas"]["WorkflowFailedEventData"];
        };
        /**
         * WorkflowFailedEventData
         * @description A run that ended early.
         */
        WorkflowFailedEventData: {
            /**
             * @description The workflow the run belongs to.
             * @example wf_0123456789abcdefghijklmn
             */
            workflow_id: string;
            /**
             * @description The workflow's project.
             * @example proj_0123456789abcdefghijklmn
             */
            project_id: string;
            /**
             * @description The run that ended.
             * @example run_0123456789abcdefghijklmn
             */
            run_id: string;
            /** @constant */
            status: "failed";
            /**
             * @description When the run started its first step; null for a run cancelled before it started.
             * @example 2026-11-22T09:30:00.000Z
             */
            started_at: string | null;
            /**
             * Format: date-time
             * @description When the run failed.
             * @example 2026-11-22T09:30:00.000Z
             */
            finished_at: string;
            /** @description A sentence saying what happened, for people. */
            error: string;
            error_code: components["schemas"]["WorkflowErrorCode"];
        };
        /** WorkflowList */
        WorkflowList: {
            data: components["schemas"]["Workflow"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** WorkflowStep */
        WorkflowStep: {
            /** @example step_0123456789abcdefghijklmn */
            id: string;
            type: components["schemas"]["StepType"];
            /** @description Required for task and approval steps; optional for a wait. */
            title: string | null;
            /** @description Task and approval steps: the member the task goes to; null leaves it unassigned. */
            assignee_id: string | null;
            /**
             * @description Task steps: the task is due this long after the step starts. Written as `90s`, `15m`, `2h`, `1d 12h` or ISO 8601 (`PT15M`); always returned as ISO 8601.
             * @example P1DT12H
             */
            due_in: string | null;
            /**
             * @description Wait steps (required there): 1 second to 30 days. Written as `90s`, `15m`, `2h`, `1d 12h` or ISO 8601 (`PT15M`); always returned as ISO 8601.
             * @example P1DT12H
             */
            duration: string | null;
        };
        /** WorkflowStepInput */
        WorkflowStepInput: {
            /** @description PUT only: an existing step of this workflow keeps its id; leave it out for a new step. */
            id?: string;
            type: components["schemas"]["StepType"];
            title?: string | null;
            assignee_id?: string | null;
            /**
             * @description Task steps only. Written as `90s`, `15m`, `2h`, `1d 12h` or ISO 8601 (`PT15M`); always returned as ISO 8601.
             * @example P1DT12H
             */
            due_in?: string | null;
            /**
             * @description Wait steps only, and required there. Written as `90s`, `15m`, `2h`, `1d 12h` or ISO 8601 (`PT15M`); always returned as ISO 8601.
             * @example P1DT12H
             */
            duration?: string | null;
        };
    };
    responses: {
        /** @description `invalid_json`: the body is not JSON (an empty body on POST/PUT included). `validation_failed`: a body field or query parameter breaks a rule; `details` names every offending field. */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `unauthorized`: the Authorization header is missing or malformed, or the key is unknown or revoked. */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `forbidden`: the key's scope or its user's current role does not allow the call. `workspace_read_only`: a state-changing call while the organisation's subscription is cancelled; the message names the deletion date. */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `not_found`: no such id in the caller's organisation (another organisation's id looks the same). */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `conflict`: the call contradicts the current state (an e-mail of an active member, a change that would leave no owner, a delivery still in flight), or a request with the same Idempotency-Key is still running. */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `invitation_expired`: the invitation is older than 72 hours; ask for a new one. */
        Gone: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `payload_too_large`: the body is larger than 1 MiB. */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `unsupported_media_type`: a body sent with a Content-Type other than application/json. */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `idempotency_key_reused`: this Idempotency-Key was used with a different method, path or body. */
        IdempotencyKeyReused: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `rate_limited`: over the rate limit of the key (or of the address, for failed authentications). Retry after `Retry-After` seconds. */
        RateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `internal_error`: a fault on our side; the body never carries internal detail. Quote X-Request-Id when reporting it. */
        InternalError: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description `service_unavailable`: the database is briefly unreachable; retry after `Retry-After` seconds. */
        ServiceUnavailable: {
            headers: {
                "X-Request-Id": components["headers"]["RequestId"];
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: {
        /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
        IdempotencyKey: string;
    };
    requestBodies: never;
    headers: {
        /** @description The request id: the `X-Request-Id` the client sent (1 to 128 of `A-Za-z0-9._:-`), or one the service made. */
        RequestId: string;
        /** @description Requests allowed per API key in a rolling 60-second window. */
        RateLimitLimit: number;
        /** @description Requests left in the current window. */
        RateLimitRemaining: number;
        /** @description Whole seconds to wait before retrying, at least 1. */
        RetryAfter: number;
        /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
        IdempotentReplayed: "true";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listProjects: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
                status?: components["schemas"]["ProjectStatus"];
                /** @description `organization`: every member sees the project; `private`: only its collaborators, admins and owners. */
                visibility?: components["schemas"]["ProjectVisibility"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of projects, newest first. Follow `next_cursor` for the next page. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "proj_40zapspamjlk10kmts7pcdbq",
                     *           "name": "Apollo",
                     *           "status": "active",
                     *           "created_at": "2026-11-22T09:30:00.000Z"
                     *         }
                     *       ],
                     *       "next_cursor": "eyJzIjoxMjN9"
                     *     }
                     */
                    "application/json": components["schemas"]["ProjectList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createProject: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Apollo",
                 *       "description": "Guidance computer, second revision",
                 *       "status": "active"
                 *     }
                 */
                "application/json": components["schemas"]["CreateProjectRequest"];
            };
        };
        responses: {
            /** @description The created project. It fires `project.created`. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "name": "Apollo",
                     *       "description": "Guidance computer, second revision",
                     *       "status": "active",
                     *       "visibility": "organization",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Project"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The project. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "name": "Apollo",
                     *       "description": "Guidance computer, second revision",
                     *       "status": "active",
                     *       "visibility": "organization",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Project"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description Only the fields given change. Changing `visibility` needs the project's manager role, an admin or an owner. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "visibility": "private"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateProjectRequest"];
            };
        };
        responses: {
            /** @description The project after the change. A change fires `project.updated` (`previous` holds the old values, `visibility` included); a call that changes nothing returns it as it was. Going `private` is 409 while open tasks or workflow steps name someone who could not see it. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "name": "Apollo",
                     *       "description": "Guidance computer, second revision",
                     *       "status": "active",
                     *       "visibility": "private",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Project"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted with its workflows, runs and tasks. It fires `project.deleted`. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listCollaborators: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the project's collaborators, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "user": {
                     *             "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *             "email": "ada@example.com",
                     *             "name": "Ada Lovelace"
                     *           },
                     *           "role": "editor",
                     *           "created_at": "2026-11-22T10:05:12.345Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["CollaboratorList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putCollaborator: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                user_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "editor"
                 *     }
                 */
                "application/json": components["schemas"]["PutCollaboratorRequest"];
            };
        };
        responses: {
            /** @description The collaborator with their project role: 201 when added, 200 when the role changed or was already this one. Audit row `project.collaborator_added` or `project.collaborator_role_changed`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "user": {
                     *         "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *         "email": "ada@example.com",
                     *         "name": "Ada Lovelace"
                     *       },
                     *       "role": "editor",
                     *       "created_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Collaborator"];
                };
            };
            /** @description The collaborator with their project role: 201 when added, 200 when the role changed or was already this one. Audit row `project.collaborator_added` or `project.collaborator_role_changed`. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "user": {
                     *         "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *         "email": "ada@example.com",
                     *         "name": "Ada Lovelace"
                     *       },
                     *       "role": "editor",
                     *       "created_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Collaborator"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteCollaborator: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                user_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed (audit row `project.collaborator_removed`); in a private project their open tasks there are unassigned. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of subscriptions, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *           "url": "https://hooks.example.com/workspace",
                     *           "events": [
                     *             "project.created",
                     *             "project.updated"
                     *           ],
                     *           "active": true,
                     *           "status": "active",
                     *           "created_at": "2026-11-22T09:30:00.000Z",
                     *           "failing_since": null,
                     *           "disabled_at": null,
                     *           "disabled_reason": null,
                     *           "previous_secret_expires_at": null,
                     *           "rate_limit": null,
                     *           "ordering": "none"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://hooks.example.com/workspace",
                 *       "events": [
                 *         "project.created",
                 *         "project.updated"
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CreateWebhookRequest"];
            };
        };
        responses: {
            /** @description The subscription with its signing `secret`, shown this once. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "url": "https://hooks.example.com/workspace",
                     *       "events": [
                     *         "project.created",
                     *         "project.updated"
                     *       ],
                     *       "active": true,
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "failing_since": null,
                     *       "disabled_at": null,
                     *       "disabled_reason": null,
                     *       "previous_secret_expires_at": null,
                     *       "rate_limit": null,
                     *       "ordering": "none",
                     *       "secret": "whsec_3q2+7wEXAMPLEj8Nc1vYkz0Yh5Rp9bT4sLmG6aD2fU0="
                     *     }
                     */
                    "application/json": components["schemas"]["CreatedWebhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription, never its secret. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "url": "https://hooks.example.com/workspace",
                     *       "events": [
                     *         "project.created",
                     *         "project.updated"
                     *       ],
                     *       "active": true,
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "failing_since": null,
                     *       "disabled_at": null,
                     *       "disabled_reason": null,
                     *       "previous_secret_expires_at": null,
                     *       "rate_limit": null,
                     *       "ordering": "none"
                     *     }
                     */
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; its pending deliveries are cancelled. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description The fields to change (at least one), with the rules of creation. Waiting and later attempts go to the new URL. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://hooks.example.com/v2/workspace",
                 *       "events": [
                 *         "project.created",
                 *         "task.assigned"
                 *       ],
                 *       "rate_limit": 50,
                 *       "ordering": "fifo"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateWebhookRequest"];
            };
        };
        responses: {
            /** @description The subscription as changed. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "url": "https://hooks.example.com/v2/workspace",
                     *       "events": [
                     *         "project.created",
                     *         "task.assigned"
                     *       ],
                     *       "active": true,
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "failing_since": null,
                     *       "disabled_at": null,
                     *       "disabled_reason": null,
                     *       "previous_secret_expires_at": null,
                     *       "rate_limit": 50,
                     *       "ordering": "fifo"
                     *     }
                     */
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "previous_expires_in": 3600
                 *     }
                 */
                "application/json": components["schemas"]["RotateSecretRequest"];
            };
        };
        responses: {
            /** @description The new secret, shown this once, and when the previous one stops signing. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "secret": "whsec_Qm9vdHN0cmFwRVhBTVBMRXNlY3JldEtleTAxMjM0NTY=",
                     *       "previous_expires_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["RotatedSecret"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    sendTestWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "project.created"
                 *     }
                 */
                "application/json": components["schemas"]["TestEventRequest"];
            };
        };
        responses: {
            /** @description Accepted: the test delivery, sent once; read it in the history for the attempt. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "delivery_id": "dlv_8r3t5y7u9i1o2p4a6s8d0f2g"
                     *     }
                     */
                    "application/json": components["schemas"]["TestEventAccepted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    enableWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription, active again. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "url": "https://hooks.example.com/workspace",
                     *       "events": [
                     *         "project.created",
                     *         "project.updated"
                     *       ],
                     *       "active": true,
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "failing_since": null,
                     *       "disabled_at": null,
                     *       "disabled_reason": null,
                     *       "previous_secret_expires_at": null,
                     *       "rate_limit": null,
                     *       "ordering": "none"
                     *     }
                     */
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
                /** @description delivered; retrying: failed at least once and waits for its next automatic attempt (next_attempt_at); pending: waits for its first attempt, or for a replay; failed: permanently failed (schedule used up, or a replay failed); cancelled: its subscription was deleted, or was disabled, before it was sent (see cancel_reason). */
                status?: components["schemas"]["DeliveryStatus"];
                event?: components["schemas"]["EventType"];
                /** @description Deliveries created at or after this time. */
                from?: string;
                /** @description Deliveries created before this time. */
                to?: string;
                /** @description A delivery id (dlv_…) or an event id (evt_…). */
                id?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "dlv_8r3t5y7u9i1o2p4a6s8d0f2g",
                     *           "event_id": "evt_1q3w5e7r9t2y4u6i8o0p1a3s",
                     *           "event_type": "project.created",
                     *           "webhook_id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *           "status": "delivered",
                     *           "attempts": 1,
                     *           "next_attempt_at": null,
                     *           "last_status_code": 204,
                     *           "last_error": null,
                     *           "last_attempt_at": "2026-11-22T10:05:12.345Z",
                     *           "replayed": false,
                     *           "test": false,
                     *           "cancel_reason": null,
                     *           "waiting": null,
                     *           "created_at": "2026-11-22T09:30:00.000Z",
                     *           "updated_at": "2026-11-22T10:05:12.345Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["DeliveryList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                delivery_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery with the exact body sent and every attempt. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dlv_8r3t5y7u9i1o2p4a6s8d0f2g",
                     *       "event_id": "evt_1q3w5e7r9t2y4u6i8o0p1a3s",
                     *       "event_type": "project.created",
                     *       "webhook_id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "status": "delivered",
                     *       "attempts": 1,
                     *       "next_attempt_at": null,
                     *       "last_status_code": 204,
                     *       "last_error": null,
                     *       "last_attempt_at": "2026-11-22T10:05:12.345Z",
                     *       "replayed": false,
                     *       "test": false,
                     *       "cancel_reason": null,
                     *       "waiting": null,
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z",
                     *       "payload": "{\"event\":\"project.created\",\"timestamp\":\"2026-11-22T09:30:00.000Z\",\"data\":{\"project_id\":\"proj_40zapspamjlk10kmts7pcdbq\",\"name\":\"Apollo\",\"description\":\"Guidance computer, second revision\",\"status\":\"active\",\"created_at\":\"2026-11-22T09:30:00.000Z\",\"updated_at\":\"2026-11-22T09:30:00.000Z\"}}",
                     *       "attempt_history": [
                     *         {
                     *           "id": "att_6y8u0i2o4p6a8s0d2f4g6h8j",
                     *           "attempt_number": 1,
                     *           "trigger": "automatic",
                     *           "outcome": "success",
                     *           "started_at": "2026-11-22T10:05:12.345Z",
                     *           "duration_ms": 84,
                     *           "request_headers": {
                     *             "content-type": "application/json",
                     *             "x-service-event": "project.created",
                     *             "x-service-event-id": "evt_1q3w5e7r9t2y4u6i8o0p1a3s",
                     *             "x-service-delivery-id": "dlv_8r3t5y7u9i1o2p4a6s8d0f2g",
                     *             "x-service-delivery-attempt": "1"
                     *           },
                     *           "response_status": 204,
                     *           "response_headers": {
                     *             "date": "Sun, 22 Nov 2026 10:05:12 GMT"
                     *           },
                     *           "response_body": "",
                     *           "error": null,
                     *           "held_reason": null,
                     *           "held_ms": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["DeliveryDetail"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replayDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
                delivery_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted: the delivery, pending its replay attempt. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dlv_8r3t5y7u9i1o2p4a6s8d0f2g",
                     *       "event_id": "evt_1q3w5e7r9t2y4u6i8o0p1a3s",
                     *       "event_type": "project.created",
                     *       "webhook_id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "status": "pending",
                     *       "attempts": 1,
                     *       "next_attempt_at": "2026-11-22T10:05:12.345Z",
                     *       "last_status_code": 204,
                     *       "last_error": null,
                     *       "last_attempt_at": "2026-11-22T10:05:12.345Z",
                     *       "replayed": true,
                     *       "test": false,
                     *       "cancel_reason": null,
                     *       "waiting": null,
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replayFailedDeliveries: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "since": "2026-11-21T00:00:00.000Z"
                 *     }
                 */
                "application/json": components["schemas"]["ReplayFailedRequest"];
            };
        };
        responses: {
            /** @description Accepted: the job, which re-queues the failed deliveries in batches. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "rpl_2w4e6r8t0y1u3i5o7p9a2s4d",
                     *       "webhook_id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "since": "2026-11-21T00:00:00.000Z",
                     *       "status": "running",
                     *       "count": 42,
                     *       "more": false,
                     *       "queued": 0,
                     *       "skipped": 0,
                     *       "delivered": 0,
                     *       "failed": 0,
                     *       "pending": 0,
                     *       "requested_by": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "finished_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["ReplayJob"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getReplayJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                job_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job and its progress. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "rpl_2w4e6r8t0y1u3i5o7p9a2s4d",
                     *       "webhook_id": "wh_5n2b8v4c6x1z3m7k9q0w2e4r",
                     *       "since": "2026-11-21T00:00:00.000Z",
                     *       "status": "running",
                     *       "count": 42,
                     *       "more": false,
                     *       "queued": 10,
                     *       "skipped": 0,
                     *       "delivered": 7,
                     *       "failed": 1,
                     *       "pending": 2,
                     *       "requested_by": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "finished_at": null
                     *     }
                     */
                    "application/json": components["schemas"]["ReplayJob"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUsers: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
                /** @description Only members of this status. Without it, invited and active members: suspended ones are listed only when asked for (CONTRACT 16). */
                status?: "invited" | "active" | "suspended";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of members (invited ones included), newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "email": "ada@example.com",
                     *           "name": "Ada Lovelace",
                     *           "role": "member",
                     *           "created_at": "2026-11-22T09:30:00.000Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["UserList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    inviteUser: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "grace@example.com",
                 *       "role": "admin"
                 *     }
                 */
                "application/json": components["schemas"]["InviteUserRequest"];
            };
        };
        responses: {
            /** @description The invited user. The invitation e-mail links to `{PUBLIC_BASE_URL}/invitations/{token}`, valid 72 hours. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "user_q3m8z1c5v7b2n4x6k9p0r1sd",
                     *       "email": "grace@example.com",
                     *       "name": null,
                     *       "role": "admin",
                     *       "status": "invited",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The user. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "email": "ada@example.com",
                     *       "name": "Ada Lovelace",
                     *       "role": "member",
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description Role is the only field that can change. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "admin"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateUserRequest"];
            };
        };
        responses: {
            /** @description The user with the new role. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "email": "ada@example.com",
                     *       "name": "Ada Lovelace",
                     *       "role": "admin",
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed, with their invitation, sessions and API keys. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    acceptInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The token from the invitation link. */
                token: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Grace Hopper",
                 *       "password": "correct horse battery staple"
                 *     }
                 */
                "application/json": components["schemas"]["AcceptInvitationRequest"];
            };
        };
        responses: {
            /** @description The user, now active. (The e-mailed link `GET /invitations/{token}` opens the dashboard form that makes this call; an unknown or used token is 404, an expired one 410. When the organisation requires single sign-on of the invitee's domain, no password is set: 403 `sso_required`, and the invitation is accepted through the provider on that page.) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "user_q3m8z1c5v7b2n4x6k9p0r1sd",
                     *       "email": "grace@example.com",
                     *       "name": "Grace Hopper",
                     *       "role": "admin",
                     *       "status": "active",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["User"];
                };
            };
            400: components["responses"]["BadRequest"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWorkflows: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the project's workflows, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *           "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *           "name": "Release sign-off",
                     *           "description": "Checks before a release ships",
                     *           "version": 3,
                     *           "steps": [
                     *             {
                     *               "id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *               "type": "task",
                     *               "title": "Write the release notes",
                     *               "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *               "due_in": "P2D",
                     *               "duration": null
                     *             },
                     *             {
                     *               "id": "step_2m4n6o8p0q2r4s6t8u0v2w4x",
                     *               "type": "approval",
                     *               "title": "Approve the release",
                     *               "assignee_id": null,
                     *               "due_in": null,
                     *               "duration": null
                     *             },
                     *             {
                     *               "id": "step_3y5z7a9b1c3d5e7f9g1h3i5j",
                     *               "type": "wait",
                     *               "title": "Cool-down",
                     *               "assignee_id": null,
                     *               "due_in": null,
                     *               "duration": "PT1H"
                     *             }
                     *           ],
                     *           "created_at": "2026-11-22T09:30:00.000Z",
                     *           "updated_at": "2026-11-22T10:05:12.345Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["WorkflowList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Release sign-off",
                 *       "description": "Checks before a release ships",
                 *       "steps": [
                 *         {
                 *           "type": "task",
                 *           "title": "Write the release notes",
                 *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                 *           "due_in": "2d"
                 *         },
                 *         {
                 *           "type": "approval",
                 *           "title": "Approve the release"
                 *         },
                 *         {
                 *           "type": "wait",
                 *           "title": "Cool-down",
                 *           "duration": "1h"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CreateWorkflowRequest"];
            };
        };
        responses: {
            /** @description The workflow, at version 1. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "name": "Release sign-off",
                     *       "description": "Checks before a release ships",
                     *       "version": 1,
                     *       "steps": [
                     *         {
                     *           "id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *           "type": "task",
                     *           "title": "Write the release notes",
                     *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "due_in": "P2D",
                     *           "duration": null
                     *         },
                     *         {
                     *           "id": "step_2m4n6o8p0q2r4s6t8u0v2w4x",
                     *           "type": "approval",
                     *           "title": "Approve the release",
                     *           "assignee_id": null,
                     *           "due_in": null,
                     *           "duration": null
                     *         },
                     *         {
                     *           "id": "step_3y5z7a9b1c3d5e7f9g1h3i5j",
                     *           "type": "wait",
                     *           "title": "Cool-down",
                     *           "assignee_id": null,
                     *           "due_in": null,
                     *           "duration": "PT1H"
                     *         }
                     *       ],
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorkflow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The workflow with its steps; durations as ISO 8601. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "name": "Release sign-off",
                     *       "description": "Checks before a release ships",
                     *       "version": 3,
                     *       "steps": [
                     *         {
                     *           "id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *           "type": "task",
                     *           "title": "Write the release notes",
                     *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "due_in": "P2D",
                     *           "duration": null
                     *         },
                     *         {
                     *           "id": "step_2m4n6o8p0q2r4s6t8u0v2w4x",
                     *           "type": "approval",
                     *           "title": "Approve the release",
                     *           "assignee_id": null,
                     *           "due_in": null,
                     *           "duration": null
                     *         },
                     *         {
                     *           "id": "step_3y5z7a9b1c3d5e7f9g1h3i5j",
                     *           "type": "wait",
                     *           "title": "Cool-down",
                     *           "assignee_id": null,
                     *           "due_in": null,
                     *           "duration": "PT1H"
                     *         }
                     *       ],
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replaceWorkflow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description The whole workflow: what GET returns, changed where it should change. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Release sign-off",
                 *       "description": "Checks before a release ships",
                 *       "version": 3,
                 *       "steps": [
                 *         {
                 *           "id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                 *           "type": "task",
                 *           "title": "Write the release notes",
                 *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                 *           "due_in": "P2D",
                 *           "duration": null
                 *         },
                 *         {
                 *           "type": "approval",
                 *           "title": "Approve the release"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["ReplaceWorkflowRequest"];
            };
        };
        responses: {
            /** @description The workflow as replaced; its version is one higher when anything changed. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "name": "Release sign-off",
                     *       "description": "Checks before a release ships",
                     *       "version": 4,
                     *       "steps": [
                     *         {
                     *           "id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *           "type": "task",
                     *           "title": "Write the release notes",
                     *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "due_in": "P2D",
                     *           "duration": null
                     *         },
                     *         {
                     *           "id": "step_9q1r3s5t7u9v1w3x5y7z9a1b",
                     *           "type": "approval",
                     *           "title": "Approve the release",
                     *           "assignee_id": null,
                     *           "due_in": null,
                     *           "duration": null
                     *         }
                     *       ],
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWorkflow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted with its finished runs; the tasks its runs created stay in the project. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listRuns: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the workflow's runs, newest first, without their steps. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *           "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *           "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *           "workflow_version": 3,
                     *           "number": 42,
                     *           "status": "waiting",
                     *           "created_at": "2026-11-22T10:05:12.345Z",
                     *           "started_at": "2026-11-22T10:05:12.345Z",
                     *           "finished_at": null,
                     *           "error": null,
                     *           "error_code": null
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["RunList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    startRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["EmptyRequest"];
            };
        };
        responses: {
            /** @description The run, queued with a copy of the steps; a worker starts it at once. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "workflow_version": 3,
                     *       "number": 42,
                     *       "status": "queued",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "started_at": null,
                     *       "finished_at": null,
                     *       "error": null,
                     *       "error_code": null,
                     *       "steps": [
                     *         {
                     *           "position": 0,
                     *           "step_id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *           "type": "task",
                     *           "title": "Write the release notes",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         },
                     *         {
                     *           "position": 1,
                     *           "step_id": "step_2m4n6o8p0q2r4s6t8u0v2w4x",
                     *           "type": "approval",
                     *           "title": "Approve the release",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         },
                     *         {
                     *           "position": 2,
                     *           "step_id": "step_3y5z7a9b1c3d5e7f9g1h3i5j",
                     *           "type": "wait",
                     *           "title": "Cool-down",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Run"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The run with its steps. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "workflow_version": 3,
                     *       "number": 42,
                     *       "status": "waiting",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "started_at": "2026-11-22T10:05:12.345Z",
                     *       "finished_at": null,
                     *       "error": null,
                     *       "error_code": null,
                     *       "steps": [
                     *         {
                     *           "position": 0,
                     *           "step_id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *           "type": "task",
                     *           "title": "Write the release notes",
                     *           "status": "waiting",
                     *           "task_id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *           "started_at": "2026-11-22T10:05:12.345Z",
                     *           "finished_at": null
                     *         },
                     *         {
                     *           "position": 1,
                     *           "step_id": "step_2m4n6o8p0q2r4s6t8u0v2w4x",
                     *           "type": "approval",
                     *           "title": "Approve the release",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         },
                     *         {
                     *           "position": 2,
                     *           "step_id": "step_3y5z7a9b1c3d5e7f9g1h3i5j",
                     *           "type": "wait",
                     *           "title": "Cool-down",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Run"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["EmptyRequest"];
            };
        };
        responses: {
            /** @description The run, cancelled. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "workflow_version": 3,
                     *       "number": 42,
                     *       "status": "cancelled",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "started_at": "2026-11-22T10:05:12.345Z",
                     *       "finished_at": "2026-11-22T10:05:12.345Z",
                     *       "error": "Run cancelled by Ada Lovelace",
                     *       "error_code": "cancelled",
                     *       "steps": [
                     *         {
                     *           "position": 0,
                     *           "step_id": "step_1a3b5c7d9e1f3g5h7i9j1k3l",
                     *           "type": "task",
                     *           "title": "Write the release notes",
                     *           "status": "failed",
                     *           "task_id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *           "started_at": "2026-11-22T10:05:12.345Z",
                     *           "finished_at": "2026-11-22T10:05:12.345Z"
                     *         },
                     *         {
                     *           "position": 1,
                     *           "step_id": "step_2m4n6o8p0q2r4s6t8u0v2w4x",
                     *           "type": "approval",
                     *           "title": "Approve the release",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         },
                     *         {
                     *           "position": 2,
                     *           "step_id": "step_3y5z7a9b1c3d5e7f9g1h3i5j",
                     *           "type": "wait",
                     *           "title": "Cool-down",
                     *           "status": "pending",
                     *           "task_id": null,
                     *           "started_at": null,
                     *           "finished_at": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Run"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listProjectTasks: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the project's tasks, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *           "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *           "kind": "todo",
                     *           "title": "Write the release notes",
                     *           "status": "open",
                     *           "decision": null,
                     *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "due_at": "2026-11-24T10:05:12.345Z",
                     *           "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *           "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *           "created_at": "2026-11-22T10:05:12.345Z",
                     *           "updated_at": "2026-11-22T10:05:12.345Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["TaskList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "title": "Renew the certificate",
                 *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                 *       "due_at": "2026-12-31"
                 *     }
                 */
                "application/json": components["schemas"]["CreateTaskRequest"];
            };
        };
        responses: {
            /** @description The task, open. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "todo",
                     *       "title": "Renew the certificate",
                     *       "description": null,
                     *       "status": "open",
                     *       "decision": null,
                     *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "due_at": "2026-12-31T23:59:59.999Z",
                     *       "workflow_id": null,
                     *       "run_id": null,
                     *       "completed_by": null,
                     *       "completed_at": null,
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listTasks: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
                /** @description A member's id, or `me` for the key's user. */
                assignee_id?: string;
                status?: components["schemas"]["TaskStatus"];
                project_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of tasks, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *           "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *           "kind": "todo",
                     *           "title": "Write the release notes",
                     *           "status": "open",
                     *           "decision": null,
                     *           "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "due_at": "2026-11-24T10:05:12.345Z",
                     *           "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *           "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *           "created_at": "2026-11-22T10:05:12.345Z",
                     *           "updated_at": "2026-11-22T10:05:12.345Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["TaskList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The task. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "todo",
                     *       "title": "Write the release notes",
                     *       "description": null,
                     *       "status": "open",
                     *       "decision": null,
                     *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "due_at": "2026-11-24T10:05:12.345Z",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "completed_by": null,
                     *       "completed_at": null,
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description Only the fields given change. A new assignee fires `task.assigned`. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "assignee_id": "user_q3m8z1c5v7b2n4x6k9p0r1sd"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateTaskRequest"];
            };
        };
        responses: {
            /** @description The task as changed. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "todo",
                     *       "title": "Write the release notes",
                     *       "description": null,
                     *       "status": "open",
                     *       "decision": null,
                     *       "assignee_id": "user_q3m8z1c5v7b2n4x6k9p0r1sd",
                     *       "due_at": "2026-11-24T10:05:12.345Z",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "completed_by": null,
                     *       "completed_at": null,
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    completeTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["EmptyRequest"];
            };
        };
        responses: {
            /** @description The task, done. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "todo",
                     *       "title": "Write the release notes",
                     *       "description": null,
                     *       "status": "done",
                     *       "decision": null,
                     *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "due_at": "2026-11-24T10:05:12.345Z",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "completed_by": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "completed_at": "2026-11-22T10:05:12.345Z",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    approveTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["EmptyRequest"];
            };
        };
        responses: {
            /** @description The approval, approved. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "approval",
                     *       "title": "Approve the release",
                     *       "description": null,
                     *       "status": "done",
                     *       "decision": "approved",
                     *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "due_at": "2026-11-24T10:05:12.345Z",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "completed_by": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "completed_at": "2026-11-22T10:05:12.345Z",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rejectTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "The notes miss the migration step"
                 *     }
                 */
                "application/json": components["schemas"]["TaskReasonRequest"];
            };
        };
        responses: {
            /** @description The approval, rejected. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "approval",
                     *       "title": "Approve the release",
                     *       "description": null,
                     *       "status": "done",
                     *       "decision": "rejected",
                     *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "due_at": "2026-11-24T10:05:12.345Z",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "completed_by": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "completed_at": "2026-11-22T10:05:12.345Z",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "No longer needed"
                 *     }
                 */
                "application/json": components["schemas"]["TaskReasonRequest"];
            };
        };
        responses: {
            /** @description The task, cancelled. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *       "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *       "kind": "todo",
                     *       "title": "Write the release notes",
                     *       "description": null,
                     *       "status": "cancelled",
                     *       "decision": null,
                     *       "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "due_at": "2026-11-24T10:05:12.345Z",
                     *       "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *       "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *       "completed_by": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "completed_at": "2026-11-22T10:05:12.345Z",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "updated_at": "2026-11-22T10:05:12.345Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Task"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOrganization: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key's organisation. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "org_7p9q1r3s5t7u9v1w3x5y7z9a",
                     *       "name": "Acme",
                     *       "state": "active",
                     *       "deletion_at": null,
                     *       "two_step_required_at": null,
                     *       "created_at": "2026-11-22T09:30:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Organization"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
                /** @description One or more event types, comma-separated: `task.assigned,workflow.completed`. */
                type?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "evt_6n8p0q2r4s6t8v0w2x4y6z8a",
                     *           "type": "task.assigned",
                     *           "created_at": "2026-11-22T10:05:12.345Z",
                     *           "data": {
                     *             "task_id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *             "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *             "title": "Write the release notes",
                     *             "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *             "previous_assignee_id": null,
                     *             "assigned_by": null,
                     *             "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *             "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *             "due_at": "2026-11-24T10:05:12.345Z"
                     *           }
                     *         }
                     *       ],
                     *       "next_cursor": "eyJzIjoxMjN9"
                     *     }
                     */
                    "application/json": components["schemas"]["EventList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event; `data` is the webhook body's `data`, byte for byte. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "evt_6n8p0q2r4s6t8v0w2x4y6z8a",
                     *       "type": "task.assigned",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "data": {
                     *         "task_id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *         "project_id": "proj_40zapspamjlk10kmts7pcdbq",
                     *         "title": "Write the release notes",
                     *         "assignee_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *         "previous_assignee_id": null,
                     *         "assigned_by": null,
                     *         "workflow_id": "wf_3k5m7n9p1q3r5s7t9v1w3x5y",
                     *         "run_id": "run_4k6m8n0p2q4r6s8t0v2w4x6y",
                     *         "due_at": "2026-11-24T10:05:12.345Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Event"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listAuditLog: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
                /** @description A prefix of the action: `project` (or `project.`) for every project action, `workflow` for workflow and workflow run actions, `project.created` for that one. */
                action?: string;
                /** @description A user id, `cli` or `system` (part of an e-mail matches too). */
                actor_id?: string;
                /** @description A target id (part of its label matches too). */
                target_id?: string;
                /** @description From this time, inclusive. */
                from?: string;
                /** @description Up to this time, exclusive. */
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of audit rows, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "aud_8b0c2d4e6f8g0h2i4j6k8l0m",
                     *           "created_at": "2026-11-22T10:05:12.345Z",
                     *           "actor": {
                     *             "type": "user",
                     *             "id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *             "label": "ada@example.com"
                     *           },
                     *           "action": "task.assigned",
                     *           "target": {
                     *             "type": "task",
                     *             "id": "task_5a7b9c1d3e5f7g9h1i3j5k7l",
                     *             "label": "Write the release notes"
                     *           },
                     *           "source": "api",
                     *           "ip": "203.0.113.7",
                     *           "user_agent": "workspace-service-client",
                     *           "request_id": "req_5t7u9v1w3x5y7z9a1b3c5d7e",
                     *           "outcome": "success",
                     *           "changes": {
                     *             "assignee_id": {
                     *               "old": null,
                     *               "new": "user_7c2k1xq0v9m3b5n8r4t6w2ya"
                     *             }
                     *           }
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["AuditLog"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of API keys, newest first; never their secrets. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "key_9c1d3e5f7g9h1i3j5k7l9m1n",
                     *           "name": "CI",
                     *           "scope": "workflows,tasks:read",
                     *           "user_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *           "prefix": "wsk_9Qm2Lx7a",
                     *           "created_at": "2026-11-22T10:05:12.345Z",
                     *           "last_used_at": null,
                     *           "expires_at": "2027-02-24T10:05:12.345Z"
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["ApiKeyList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "scope": "workflows,tasks:read",
                 *       "name": "CI",
                 *       "expires_at": "2027-02-24T10:05:12.345Z"
                 *     }
                 */
                "application/json": components["schemas"]["CreateApiKeyRequest"];
            };
        };
        responses: {
            /** @description The key with its secret, shown this once. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "key_9c1d3e5f7g9h1i3j5k7l9m1n",
                     *       "name": "CI",
                     *       "scope": "workflows,tasks:read",
                     *       "user_id": "user_7c2k1xq0v9m3b5n8r4t6w2ya",
                     *       "prefix": "wsk_9Qm2Lx7a",
                     *       "created_at": "2026-11-22T10:05:12.345Z",
                     *       "last_used_at": null,
                     *       "expires_at": "2027-02-24T10:05:12.345Z",
                     *       "key": "wsk_9Qm2Lx7aEXAMPLEt4Rz8Vb1Nc6Hd0Jf3Kg5Ps2Wq7Ye9Ua"
                     *     }
                     */
                    "application/json": components["schemas"]["CreatedApiKey"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked: refused from the next request on. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listExports: {
        parameters: {
            query?: {
                /** @description Items per page, 1 to 100. */
                limit?: number;
                /** @description next_cursor from a previous page. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of exports, newest first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "exp_0d2e4f6g8h0i2j4k6l8m0n2o",
                     *           "status": "ready",
                     *           "created_at": "2026-11-22T09:30:00.000Z",
                     *           "ready_at": "2026-11-22T10:05:12.345Z",
                     *           "expires_at": "2026-11-29T10:05:12.345Z",
                     *           "size_bytes": 48213
                     *         }
                     *       ],
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["ExportList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    requestExport: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while the first is still running, 409. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["EmptyRequest"];
            };
        };
        responses: {
            /** @description Accepted: the export, pending until a worker builds it. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "exp_0d2e4f6g8h0i2j4k6l8m0n2o",
                     *       "status": "pending",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "ready_at": null,
                     *       "expires_at": null,
                     *       "size_bytes": null
                     *     }
                     */
                    "application/json": components["schemas"]["Export"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getExport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The export. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "exp_0d2e4f6g8h0i2j4k6l8m0n2o",
                     *       "status": "ready",
                     *       "created_at": "2026-11-22T09:30:00.000Z",
                     *       "ready_at": "2026-11-22T10:05:12.345Z",
                     *       "expires_at": "2026-11-29T10:05:12.345Z",
                     *       "size_bytes": 48213
                     *     }
                     */
                    "application/json": components["schemas"]["Export"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    downloadExport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The ZIP: `manifest.json` and one JSON Lines file per collection. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["RequestId"];
                    "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                    "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                    [name: string]: unknown;
                };
                content: {
                    "application/zip": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    projectCreatedWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. Compare in constant time. */
                "X-Service-Signature": string;
                /** @description The event name; the same as the body's `event`. */
                "X-Service-Event": "project.created";
                /** @description The event: the same on every retry and replay. De-duplicate by it. */
                "X-Service-Event-Id": string;
                /** @description This delivery: one per event and subscription. */
                "X-Service-Delivery-Id": string;
                /** @description The attempt number of this delivery, from 1; replays continue the count. */
                "X-Service-Delivery-Attempt": number;
                /** @description Names the service. */
                "User-Agent"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The `project.created` event. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "project.created",
                 *       "timestamp": "2026-11-22T09:30:00.000Z",
                 *       "data": {
                 *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
                 *         "name": "Website relaunch",
                 *         "description": "New site for the spring campaign",
                 *         "status": "active",
                 *         "visibility": "organization",
                 *         "created_at": "2026-11-22T09:30:00.000Z",
                 *         "updated_at": "2026-11-22T09:30:00.000Z"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ProjectCreatedEvent"];
            };
        };
        responses: {
            /** @description Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    projectUpdatedWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. Compare in constant time. */
                "X-Service-Signature": string;
                /** @description The event name; the same as the body's `event`. */
                "X-Service-Event": "project.updated";
                /** @description The event: the same on every retry and replay. De-duplicate by it. */
                "X-Service-Event-Id": string;
                /** @description This delivery: one per event and subscription. */
                "X-Service-Delivery-Id": string;
                /** @description The attempt number of this delivery, from 1; replays continue the count. */
                "X-Service-Delivery-Attempt": number;
                /** @description Names the service. */
                "User-Agent"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The `project.updated` event. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "project.updated",
                 *       "timestamp": "2026-11-23T14:05:12.345Z",
                 *       "data": {
                 *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
                 *         "name": "Website relaunch",
                 *         "description": "New site for the spring campaign",
                 *         "status": "archived",
                 *         "visibility": "organization",
                 *         "created_at": "2026-11-22T09:30:00.000Z",
                 *         "updated_at": "2026-11-23T14:05:12.345Z",
                 *         "previous": {
                 *           "status": "active"
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ProjectUpdatedEvent"];
            };
        };
        responses: {
            /** @description Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    projectDeletedWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. Compare in constant time. */
                "X-Service-Signature": string;
                /** @description The event name; the same as the body's `event`. */
                "X-Service-Event": "project.deleted";
                /** @description The event: the same on every retry and replay. De-duplicate by it. */
                "X-Service-Event-Id": string;
                /** @description This delivery: one per event and subscription. */
                "X-Service-Delivery-Id": string;
                /** @description The attempt number of this delivery, from 1; replays continue the count. */
                "X-Service-Delivery-Attempt": number;
                /** @description Names the service. */
                "User-Agent"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The `project.deleted` event. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "project.deleted",
                 *       "timestamp": "2026-11-24T08:00:00.000Z",
                 *       "data": {
                 *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
                 *         "name": "Website relaunch",
                 *         "status": "archived"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ProjectDeletedEvent"];
            };
        };
        responses: {
            /** @description Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    workflowCompletedWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. Compare in constant time. */
                "X-Service-Signature": string;
                /** @description The event name; the same as the body's `event`. */
                "X-Service-Event": "workflow.completed";
                /** @description The event: the same on every retry and replay. De-duplicate by it. */
                "X-Service-Event-Id": string;
                /** @description This delivery: one per event and subscription. */
                "X-Service-Delivery-Id": string;
                /** @description The attempt number of this delivery, from 1; replays continue the count. */
                "X-Service-Delivery-Attempt": number;
                /** @description Names the service. */
                "User-Agent"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The `workflow.completed` event. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "workflow.completed",
                 *       "timestamp": "2026-11-22T11:42:07.120Z",
                 *       "data": {
                 *         "workflow_id": "wf_7t3y8u1i5o9p2a6s4d0f3g7h",
                 *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
                 *         "run_id": "run_2j6k0l4z8x1c5v9b3n7m2q6w",
                 *         "status": "completed",
                 *         "started_at": "2026-11-22T10:00:00.500Z",
                 *         "finished_at": "2026-11-22T11:42:07.120Z"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["WorkflowCompletedEvent"];
            };
        };
        responses: {
            /** @description Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    workflowFailedWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. Compare in constant time. */
                "X-Service-Signature": string;
                /** @description The event name; the same as the body's `event`. */
                "X-Service-Event": "workflow.failed";
                /** @description The event: the same on every retry and replay. De-duplicate by it. */
                "X-Service-Event-Id": string;
                /** @description This delivery: one per event and subscription. */
                "X-Service-Delivery-Id": string;
                /** @description The attempt number of this delivery, from 1; replays continue the count. */
                "X-Service-Delivery-Attempt": number;
                /** @description Names the service. */
                "User-Agent"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The `workflow.failed` event. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "workflow.failed",
                 *       "timestamp": "2026-11-22T10:15:30.000Z",
                 *       "data": {
                 *         "workflow_id": "wf_7t3y8u1i5o9p2a6s4d0f3g7h",
                 *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
                 *         "run_id": "run_2j6k0l4z8x1c5v9b3n7m2q6w",
                 *         "status": "failed",
                 *         "started_at": "2026-11-22T10:00:00.500Z",
                 *         "finished_at": "2026-11-22T10:15:30.000Z",
                 *         "error": "Approval \"Sign off\" was rejected by Olive Owner: the copy is not final",
                 *         "error_code": "approval_rejected"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["WorkflowFailedEvent"];
            };
        };
        responses: {
            /** @description Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    taskAssignedWebhook: {
        parameters: {
            query?: never;
            header: {
                /** @description Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription's secret. Compare in constant time. */
                "X-Service-Signature": string;
                /** @description The event name; the same as the body's `event`. */
                "X-Service-Event": "task.assigned";
                /** @description The event: the same on every retry and replay. De-duplicate by it. */
                "X-Service-Event-Id": string;
                /** @description This delivery: one per event and subscription. */
                "X-Service-Delivery-Id": string;
                /** @description The attempt number of this delivery, from 1; replays continue the count. */
                "X-Service-Delivery-Attempt": number;
                /** @description Names the service. */
                "User-Agent"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The `task.assigned` event. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event": "task.assigned",
                 *       "timestamp": "2026-11-22T10:00:00.500Z",
                 *       "data": {
                 *         "task_id": "task_9c1v5b7n3m0q8w2e6r4t1y5u",
                 *         "project_id": "proj_4k2m9x7q1c8v5b3n6z0w2e4r",
                 *         "title": "Review the copy",
                 *         "assignee_id": "user_3h8j2k6l0z4x9c1v7b5n3m8q",
                 *         "previous_assignee_id": null,
                 *         "assigned_by": null,
                 *         "workflow_id": "wf_7t3y8u1i5o9p2a6s4d0f3g7h",
                 *         "run_id": "run_2j6k0l4z8x1c5v9b3n7m2q6w",
                 *         "due_at": "2026-11-25T10:00:00.500Z"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["TaskAssignedEvent"];
            };
        };
        responses: {
            /** @description Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "4XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API). */
            "5XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
