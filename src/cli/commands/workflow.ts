import type { Workflow } from '../../services/workflows-service.js';
import { ORG_OPTION, required, type CommandGroup, type CommandResult } from '../command.js';
import { formatFields } from '../output.js';
import { withContainer } from '../runtime.js';

const WORKFLOW_ID = [{ name: 'WORKFLOW_ID', description: 'the workflow id' }] as const;

function shown(workflow: Workflow): CommandResult {
  return {
    data: workflow,
    text: formatFields([
      ['Workflow', workflow.id],
      ['Project', workflow.project_id],
      ['Name', workflow.name],
      ['Status', workflow.status],
      ['Updated', workflow.updated_at],
    ]),
  };
}

/** A stand-in for the dashboard, so workflow events can be produced without it. */
export const workflowGroup: CommandGroup = {
  name: 'workflow',
  summary: 'workflows (dashboard stand-in)',
  commands: [
    {
      name: 'create',
      summary: 'create a workflow in a project',
      options: {
        org: ORG_OPTION,
        project: { type: 'string', value: 'PROJECT', description: 'project id (proj_...)', required: true },
        name: { type: 'string', value: 'NAME', description: 'workflow name (1 to 255 characters)', required: true },
      },
      async run(input) {
        return shown(
          await withContainer(input, (c) => c.services.workflows.create(required(input, 'org'), required(input, 'project'), required(input, 'name'))),
        );
      },
    },
    {
      name: 'complete',
      summary: 'record a successful run: emits workflow.completed',
      options: { org: ORG_OPTION },
      positionals: WORKFLOW_ID,
      async run(input) {
        return shown(await withContainer(input, (c) => c.services.workflows.completeRun(required(input, 'org'), input.args[0]!)));
      },
    },
    {
      name: 'fail',
      summary: 'record a failed run: emits workflow.failed with the error',
      options: { org: ORG_OPTION, error: { type: 'string', value: 'TEXT', description: 'what went wrong', required: true } },
      positionals: WORKFLOW_ID,
      async run(input) {
        return shown(
          await withContainer(input, (c) => c.services.workflows.failRun(required(input, 'org'), input.args[0]!, required(input, 'error'))),
        );
      },
    },
  ],
};
