import type { Task } from '../../services/tasks-service.js';
import { ORG_OPTION, required, type CommandGroup, type CommandResult } from '../command.js';
import { formatFields } from '../output.js';
import { withContainer } from '../runtime.js';

function shown(task: Task): CommandResult {
  return {
    data: task,
    text: formatFields([
      ['Task', task.id],
      ['Project', task.project_id],
      ['Workflow', task.workflow_id],
      ['Title', task.title],
      ['Assignee', task.assignee_id],
      ['Updated', task.updated_at],
    ]),
  };
}

/** A stand-in for the dashboard, so task events can be produced without it. */
export const taskGroup: CommandGroup = {
  name: 'task',
  summary: 'tasks (dashboard stand-in)',
  commands: [
    {
      name: 'create',
      summary: 'create an unassigned task in a project',
      options: {
        org: ORG_OPTION,
        project: { type: 'string', value: 'PROJECT', description: 'project id (proj_...)', required: true },
        title: { type: 'string', value: 'TITLE', description: 'task title (1 to 255 characters)', required: true },
        workflow: { type: 'string', value: 'WORKFLOW_ID', description: 'a workflow of the same project' },
      },
      async run(input) {
        return shown(
          await withContainer(input, (c) =>
            c.services.tasks.create(required(input, 'org'), required(input, 'project'), required(input, 'title'), input.options.workflow),
          ),
        );
      },
    },
    {
      name: 'assign',
      summary: 'assign or reassign a task: emits task.assigned (nothing when the assignee is unchanged)',
      options: { org: ORG_OPTION, user: { type: 'string', value: 'USER_ID', description: 'the assignee (user_...)', required: true } },
      positionals: [{ name: 'TASK_ID', description: 'the task id' }],
      async run(input) {
        return shown(await withContainer(input, (c) => c.services.tasks.assign(required(input, 'org'), input.args[0]!, required(input, 'user'))));
      },
    },
  ],
};
