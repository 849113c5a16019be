import { cliActor } from '../../services/access/actor.js';
import { readDueDate, type Task, type TaskResolution } from '../../services/workflows/tasks-service.js';
import { AS_OPTION, CURSOR_OPTION, LIMIT_OPTION, ORG_OPTION, pageResult, required, UsageError, type CommandGroup, type CommandResult } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import { actingAs, withContainer } from '../runtime.js';

const TASK_ID = [{ name: 'TASK_ID', description: 'the task id (task_...)' }] as const;

function shown(task: Task): CommandResult {
  return {
    data: task,
    text: formatFields([
      ['Task', task.id],
      ['Project', task.project_id],
      ['Title', task.title],
      ['Kind', task.kind],
      ['Status', task.decision ? `${task.status} (${task.decision})` : task.status],
      ['Assignee', task.assignee_id],
      ['Due', task.due_at],
      ['Workflow', task.workflow_id],
      ['Run', task.run_id === null ? null : `${task.run_id} (step ${task.run_step})`],
      ['Updated', task.updated_at],
    ]),
  };
}

/** `--due` is checked with the arguments, so a mistyped date is a usage error (exit 2). */
function checkDue(value: string): string | null {
  try {
    readDueDate(value);
    return null;
  } catch {
    return 'must be a date such as 2026-12-31 (due at the end of that day, UTC) or an ISO 8601 time';
  }
}

export const taskGroup: CommandGroup = {
  name: 'task',
  summary: 'tasks: list, create, assign, finish and cancel',
  commands: [
    {
      name: 'list',
      summary: "list an organisation's tasks, newest first (as GET /v1/tasks)",
      options: {
        org: ORG_OPTION,
        assignee: { type: 'string', value: 'USER', description: 'only tasks assigned to this member (user_...)' },
        status: { type: 'string', value: 'STATUS', description: 'only tasks in this state', choices: ['open', 'done', 'cancelled'] },
        project: { type: 'string', value: 'PROJECT', description: 'only tasks of this project (proj_...)' },
        as: AS_OPTION,
        limit: LIMIT_OPTION,
        cursor: CURSOR_OPTION,
      },
      async run(input) {
        const page = await withContainer(input, async (c) =>
          c.services.tasks.list(
            await actingAs(c, input),
            { assignee_id: input.options.assignee, status: input.options.status as Task['status'] | undefined, project_id: input.options.project },
            { limit: Number(input.options.limit ?? 20), cursor: input.options.cursor },
          ),
        );
        return pageResult(page, formatTable(page.items, ['id', 'kind', 'status', 'title', 'assignee_id', 'due_at', 'created_at']));
      },
    },
    {
      name: 'create',
      summary: 'create an open to-do in a project (assigning it emits task.assigned)',
      options: {
        org: ORG_OPTION,
        project: { type: 'string', value: 'PROJECT', description: 'project id (proj_...)', required: true },
        title: { type: 'string', value: 'TITLE', description: 'task title (1 to 255 characters, not blank)', required: true },
        description: { type: 'string', value: 'TEXT', description: 'details (up to 10,000 characters)' },
        assignee: { type: 'string', value: 'USER', description: 'assign it to this member (user_...)' },
        due: { type: 'string', value: 'YYYY-MM-DD', description: 'due at the end of that day (UTC)', check: checkDue },
      },
      async run(input) {
        const task = await withContainer(input, (c) =>
          c.services.tasks.create(cliActor(required(input, 'org')), required(input, 'project'), {
            title: required(input, 'title'),
            description: input.options.description,
            assignee_id: input.options.assignee,
            due_at: input.options.due === undefined ? undefined : readDueDate(input.options.due),
          }),
        );
        return shown(task);
      },
    },
    {
      name: 'assign',
      summary: 'assign, reassign or unassign an open task: emits task.assigned (nothing when unchanged or cleared)',
      details: 'Give exactly one of --user and --unassign.',
      options: {
        org: ORG_OPTION,
        user: { type: 'string', value: 'USER', description: 'the new assignee (user_...)' },
        unassign: { type: 'boolean', description: 'leave the task without an assignee' },
      },
      positionals: TASK_ID,
      async run(input) {
        const user = input.options.user;
        const unassign = input.flags.unassign === true;
        if (user === undefined && !unassign) throw new UsageError('give --user USER or --unassign', 'task assign');
        if (user !== undefined && unassign) throw new UsageError('--user and --unassign cannot be given together', 'task assign');
        const task = await withContainer(input, (c) => c.services.tasks.assign(cliActor(required(input, 'org')), input.args[0]!, unassign ? null : user!));
        return shown(task);
      },
    },
    {
      name: 'done',
      summary: 'finish an open task: a to-do is marked done, an approval approved (or rejected with --reject)',
      details: "Finishing a run's task moves the run on: the next step starts, or a rejection fails the run.",
      options: {
        org: ORG_OPTION,
        reject: { type: 'boolean', description: 'reject the approval instead (the run fails with approval_rejected)' },
        reason: { type: 'string', value: 'TEXT', description: 'why it was rejected (with --reject)' },
      },
      positionals: TASK_ID,
      async run(input) {
        const reject = input.flags.reject === true;
        if (input.options.reason !== undefined && !reject) throw new UsageError('--reason goes with --reject', 'task done');
        const actor = cliActor(required(input, 'org'));
        const id = input.args[0]!;
        const task = await withContainer(input, async (c) => {
          // "done" means the task's own way of finishing; the service still refuses a mismatch (409).
          const resolution: TaskResolution = reject
            ? { action: 'reject', reason: input.options.reason }
            : (await c.services.tasks.get(actor, id)).kind === 'approval'
              ? { action: 'approve' }
              : { action: 'done' };
          return c.services.tasks.resolve(actor, id, resolution);
        });
        return shown(task);
      },
    },
    {
      name: 'cancel',
      summary: "cancel an open task (a run's task fails its run with task_cancelled)",
      options: { org: ORG_OPTION, reason: { type: 'string', value: 'TEXT', description: 'why it was cancelled' } },
      positionals: TASK_ID,
      async run(input) {
        const task = await withContainer(input, (c) =>
          c.services.tasks.resolve(cliActor(required(input, 'org')), input.args[0]!, { action: 'cancel', reason: input.options.reason }),
        );
        return shown(task);
      },
    },
  ],
};
