import { useTranslation } from 'react-i18next';
import { messageTime } from '../../i18n/format.ts';

/**
 * A message's time as the chat shows it, in the message list, pins and search results alike: "Today at 9:21 PM" /
 * "Yesterday at …" as in the clients people know, else the date; the full date and time in the tooltip.
 */
export function MessageTime({ timestamp }: { timestamp: string }) {
  const { shown, full } = useMessageTime(timestamp);
  return (
    <time dateTime={timestamp} title={full}>
      {shown}
    </time>
  );
}

/** The words of a message's time (`shown`, as MessageTime shows it; `full`, its tooltip), for a spoken label. */
export function useMessageTime(timestamp: string): { shown: string; full: string } {
  const { t } = useTranslation();
  return messageTime(timestamp, (day, time) => t(day === 'today' ? 'chat.todayAt' : 'chat.yesterdayAt', { time }));
}
