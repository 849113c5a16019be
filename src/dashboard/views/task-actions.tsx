import type { Task } from '../../services/workflows/tasks-service.js';
import { ActionForm } from './components.js';

/**
 * The buttons that finish an open task, for whoever may use them (the assignee or an admin): "Mark
 * done" for a to-do, "Approve" / "Reject" for an approval. Reject leads to a confirmation page (it fails
 * the run). `back` is the dashboard path to return to.
 */
export function TaskActions({ task, csrf, back, canDecide }: { task: Pick<Task, 'id' | 'kind' | 'status' | 'title'>; csrf: string; back: string; canDecide: boolean }) {
  if (task.status !== 'open' || !canDecide) return null;
  const base = `/dashboard/tasks/${encodeURIComponent(task.id)}`;
  if (task.kind === 'approval') {
    return (
      <div class="row-actions">
        <ActionForm action={`${base}/approve`} csrf={csrf} label="Approve" ariaLabel={`Approve: ${task.title}`} hidden={{ back }} secondary />
        <a class="button danger-outline" href={`${base}/reject?back=${encodeURIComponent(back)}`} aria-label={`Reject: ${task.title}`}>
          Reject
        </a>
      </div>
    );
  }
  // The title in the accessible name: a list of "Mark done" buttons is otherwise a list of the same words.
  // Secondary: a list of rows each with a solid button has no primary action left (review 5, PD1).
  return <ActionForm action={`${base}/done`} csrf={csrf} label="Mark done" ariaLabel={`Mark done: ${task.title}`} hidden={{ back }} secondary />;
}
